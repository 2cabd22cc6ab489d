import type { ExpectedCacheConfig } from '../engine/expected-cache.js';
import type { ExpectedCachePlan } from '../options/run-plan.js';
import { readKvCapacity } from '../server-metrics/kv-capacity.js';
import type { ExpectedCacheModelDescription } from '../metrics/prefix-cache-tally.js';

/**
 * The expected-cache model of a run: --kv-cache-tokens when given, else the server's KV capacity when its /metrics
 * states it (vLLM's `cache_config_info`), else infinite. `metricsPage`: the server's /metrics page as engine detection
 * read it (undefined when it got none: the model is then infinite).
 */
export function expectedCacheModel(
  plan: ExpectedCachePlan,
  metricsPage: string | undefined,
  warn: (message: string) => void,
): { config: ExpectedCacheConfig; description: ExpectedCacheModelDescription } {
  const blockSize = plan.blockSize;
  let tokens = plan.capacityTokens;
  let source: string | null = tokens === undefined ? null : '--kv-cache-tokens';
  if (tokens === undefined) {
    const server = metricsPage === undefined ? undefined : readKvCapacity(metricsPage);
    if (server !== undefined) {
      tokens = server.blocks * server.blockSize;
      source = server.source;
      if (server.blockSize !== blockSize) {
        warn(`the server's KV blocks hold ${server.blockSize} tokens (${server.source}) but --cache-block-size is ${blockSize}: the expected cache cuts prompts differently from the server`);
      }
    }
  }
  const capacityBlocks = tokens === undefined ? undefined : Math.max(1, Math.floor(tokens / blockSize));
  return {
    config: { blockSize, capacityBlocks },
    description: {
      block_size: blockSize,
      capacity_model: capacityBlocks === undefined ? 'infinite' : 'lru',
      capacity_tokens: capacityBlocks === undefined ? null : capacityBlocks * blockSize,
      capacity_source: source,
      scope: 'global',
    },
  };
}
