/**
 * One voter's call (ADR-0064's councils; prompts and parsing are packages/core/src/adversarial/prompts.ts and
 * answers.ts): a structured call through the ModelGateway, role `adv_<voter>` (its model `models.adv_<voter>`, else
 * `models.adversarial`, else `models.default`; ledgered under that role like every call). The role line opens the user
 * message, after the two cacheable system blocks every voter of the round shares (as grooming's task header does).
 *
 * An answer that does not parse after the gateway's repair attempt becomes the voter's synthetic concern (answers.ts:
 * never "no concerns"); a provider failure or a budget propagates, as for every other call of the plan phase.
 */
import {
  answerSchemaFor,
  buildVoterPrompt,
  ModelOutputError,
  parseVoterAnswer,
  unreadableConcern,
  type AdversarialStageSpec,
  type Concern,
  type VoterName,
} from '@hydraflow/core';
import type { z } from 'zod';
import type { PhaseContext } from '../phase-context';

export function voterRole(voter: VoterName): string {
  return `adv_${voter}`;
}

export async function askVoter(
  ctx: PhaseContext,
  args: {
    spec: AdversarialStageSpec;
    voter: VoterName;
    round: number;
    subject: string;
    previous: Concern[];
    /** Knowledge recalled from the memory store (the assumption surfacer's). */
    knowledge?: readonly string[];
  },
): Promise<Concern[]> {
  const { spec, voter } = args;
  const prompt = buildVoterPrompt({
    spec,
    voter,
    round: args.round,
    issue: { number: ctx.issue.number, title: ctx.issue.title, body: ctx.issue.body ?? '' },
    subject: args.subject,
    previous: args.previous,
    ...(args.knowledge?.length ? { knowledge: args.knowledge } : {}),
  });
  const role = voterRole(voter);
  try {
    const answer: unknown = await ctx.models.structured({
      role,
      schema: answerSchemaFor(voter) as z.ZodType<unknown>,
      schemaName: 'adversarial_answer',
      request: {
        issue: ctx.issue.number,
        system: prompt.system,
        messages: [{ role: 'user', content: `HydraFlow ${role} agent. Issue #${ctx.issue.number}.\n\n${prompt.user}` }],
        maxOutputTokens: 2_000,
        temperature: 0,
      },
    });
    return parseVoterAnswer(spec, voter, answer).concerns;
  } catch (error) {
    if (error instanceof ModelOutputError) return [unreadableConcern(spec, voter)];
    throw error;
  }
}
