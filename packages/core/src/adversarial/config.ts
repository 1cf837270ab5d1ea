/**
 * The `adversarial:` section of the configuration (docs/configuration.md, docs/adr/0018-adversarial-layer.md). Off by
 * default while the layer is incomplete: today only the plan council (stages.ts `plan-council`) is wired, into the
 * plan phase (src/phases/adversarial/). Budgets, retries and voters are the stage table's (stages.ts), not options.
 */
import { z } from 'zod';

const e = (text: string) => ({ error: text });

export const adversarialConfigSchema = z
  .strictObject({
    enabled: z
      .boolean(e('true or false'))
      .default(false)
      .describe(
        'Run the adversarial layer (docs/adr/0018-adversarial-layer.md): the complexity gate, and for a load-bearing issue the plan council (Builder, Tester, Risk-Skeptic) between the planner and the plan reviewer. Off by default until the layer is complete.',
      ),
  })
  .prefault({})
  .describe('The adversarial layer: contrarian voters before code (docs/adr/0018-adversarial-layer.md).');
