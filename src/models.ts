import { modelFor, priceTable, unknownModelPrice, type HydraflowConfig } from '@hydraflow/core';
import { createProvider, type ModelProvider } from '@hydraflow/providers';
import type { ActionInputs } from './inputs';

/** The model side of a run: one provider per configured model (its SDK loaded on first use) and the prices. */
export interface Models {
  providerFor: (role: string) => Promise<ModelProvider>;
  prices: ReturnType<typeof priceTable>;
}

export function createModels(inputs: ActionInputs, config: HydraflowConfig): Models {
  const providers = new Map<string, Promise<ModelProvider>>();
  const providerFor = (role: string): Promise<ModelProvider> => {
    const model = modelFor(config, role);
    let provider = providers.get(model);
    if (!provider) {
      const apiKey = (config.provider === 'anthropic' ? inputs.anthropicApiKey : inputs.openaiApiKey) ?? '';
      provider = createProvider({
        provider: config.provider,
        model,
        apiKey,
        ...(config.base_url ? { baseUrl: config.base_url } : {}),
      });
      providers.set(model, provider);
    }
    return provider;
  };
  return {
    providerFor,
    prices: priceTable(
      Object.fromEntries(
        Object.entries(config.pricing).map(([model, p]) => [
          model,
          { input: p.input, output: p.output, cachedInput: p.cached_input, cacheWrite: p.cache_write },
        ]),
      ),
      unknownModelPrice(config.provider),
    ),
  };
}
