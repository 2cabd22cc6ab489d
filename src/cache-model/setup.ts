import { ServerTokenizer, serverTokenizerLabel, type ServerTokenizerKind, type ServerTokenizerSpec } from '../client/server-tokenizer.js';
import type { ExpectedCacheConfig } from './expected-cache.js';
import { ConfigError } from '../errors/index.js';
import { runPrefixCache, type ExpectedCacheModelDescription, type PrefixCacheSummary, type RunPrefixCache } from '../metrics/prefix-cache-tally.js';
import type { Summary } from '../metrics/summary.js';
import type { ExpectedCachePlan } from '../options/run-plan.js';
import { cacheSemantics, type SemanticsAnswers } from '../server-engine/cache-semantics.js';
import type { EngineProbe } from '../server-engine/detect.js';
import type { EngineName } from '../server-engine/profiles.js';
import { readKvCapacity, type ServerKvCapacity } from '../server-metrics/kv-capacity.js';
import type { TokenCounter } from '../tokenizer/index.js';

/** What the run knows when it sets its expected-cache model up: the plan, the server, its answers, the tokenizer. */
export interface CacheModelInput {
  plan: ExpectedCachePlan;
  probe: EngineProbe;
  /** The local token counter, and --tokenizer as given (`server` forces the server's ids; any other keeps local ones). */
  counter: TokenCounter;
  tokenizerOption: string | undefined;
  /** The tokenizer's warnings, held back until the model's ids are known (with the server's, "approximate" is not news). */
  tokenizerWarnings: readonly string[];
  /** Where the server's tokenize endpoints are, and the model they take. */
  server: Omit<ServerTokenizerSpec, 'kind'>;
  /** Worker threads (one index for all of them: scope `global`). */
  workers: number;
  signal?: AbortSignal;
  warn: (message: string) => void;
}

/** The model: its config (for each engine of the run), how results.json describes it, and the token ids it counts. */
export interface CacheModelSetup {
  config: ExpectedCacheConfig;
  description: ExpectedCacheModelDescription;
  /** The tokenizer results.json names (`tokenizer`), and whether the model's counts are exact. */
  tokenizer: string | undefined;
  exact: boolean;
}

/** Engines whose tokenize endpoints chatload can use. */
const SERVER_TOKENIZERS: Partial<Record<EngineName, ServerTokenizerKind>> = { llamacpp: 'llamacpp', vllm: 'vllm', sglang: 'sglang' };

/**
 * The server's token ids, when they are to be used (issue #30): with --tokenizer server (an error when the engine has
 * no tokenize endpoint that works), and by default when no exact local tokenizer resolved and the engine offers them.
 */
async function serverTokens(input: CacheModelInput): Promise<ServerTokenizerSpec | undefined> {
  const engine = input.probe.engine.name;
  const kind = SERVER_TOKENIZERS[engine];
  const option = input.tokenizerOption?.trim();
  const forceServer = option === 'server';
  // A tokenizer the user named is theirs to choose, approximate or not.
  if (option !== undefined && !forceServer) return undefined;
  if (kind === undefined) {
    if (forceServer) throw new ConfigError(`--tokenizer server: the server's engine (${engine}) has no tokenize endpoint chatload knows (llama.cpp's /apply-template + /tokenize, vLLM's /tokenize, SGLang's /v1/tokenize)`);
    return undefined;
  }
  if (!forceServer && input.counter.tokenizer.exact) return undefined;
  const spec: ServerTokenizerSpec = { ...input.server, kind };
  const tokenizer = new ServerTokenizer(spec, input.signal);
  try {
    const check = await tokenizer.check();
    if (check.ok) return spec;
    if (forceServer) throw new ConfigError(`--tokenizer server: ${tokenizer.label} does not work: ${check.reason}`);
    input.warn(`the server's tokenize endpoints do not answer (${check.reason}): the expected cache counts in approximate tokens`);
    return undefined;
  } finally {
    await tokenizer.close();
  }
}

/**
 * The expected-cache model of a run (issue #30): the detected engine's semantics (block size, when a prompt is shared),
 * the token ids (local, or the server's own), and the capacity: --kv-cache-tokens when given, else the server's KV
 * capacity when its /metrics states it (vLLM's `cache_config_info`), else infinite. --cache-block-size overrides the
 * engine's block size.
 */
export async function expectedCacheModel(input: CacheModelInput): Promise<CacheModelSetup> {
  const { plan, probe, warn } = input;
  const metricsPage = probe.metrics?.status === 200 ? probe.metrics.text : undefined;
  const server = metricsPage === undefined ? undefined : readKvCapacity(metricsPage);
  const answers: SemanticsAnswers = { props: probe.props, serverInfo: probe.serverInfo, metricsText: metricsPage };
  if (server !== undefined) answers.metricsBlockSize = { blockSize: server.blockSize, source: server.source };
  const semantics = cacheSemantics(probe.engine.name, answers);
  let blockSize = semantics.block_size;
  if (plan.blockSize !== undefined && plan.blockSize !== blockSize) {
    if (server !== undefined) warn(`the server's KV blocks hold ${server.blockSize} tokens (${server.source}) but --cache-block-size is ${plan.blockSize}: the expected cache cuts prompts differently from the server`);
    semantics.sources.push(`block_size: --cache-block-size (the server's: ${blockSize})`);
    blockSize = plan.blockSize;
  }
  semantics.block_size = blockSize;
  let tokens = plan.capacityTokens;
  let source: string | null = tokens === undefined ? null : '--kv-cache-tokens';
  if (tokens === undefined && server !== undefined) {
    tokens = server.blocks * server.blockSize;
    source = server.source;
  }
  const capacityBlocks = tokens === undefined ? undefined : Math.max(1, Math.floor(tokens / blockSize));
  // A router page that sums its replicas' capacity (the simulator's): one ideal cache holds the fleet's, each replica's
  // pool its share (replica pages of their own: withReplicaPages). --kv-cache-tokens is one server's, for both.
  const fleet = source !== '--kv-cache-tokens' && server !== undefined && server.replicas > 1 ? server.replicas : 1;
  const replicaCapacityBlocks = capacityBlocks === undefined || fleet === 1 ? undefined : Math.max(1, Math.floor(capacityBlocks / fleet));
  const serverSpec = await serverTokens(input);
  const ids = serverSpec === undefined ? 'local' : 'server';
  for (const message of input.tokenizerWarnings) {
    warn(serverSpec === undefined ? message : `${message}; the expected cache counts in the server's own token ids (${serverTokenizerLabel(serverSpec.kind)})`);
  }
  return {
    // vLLM returns the ids with each answer (return_token_ids, v0.10.2+); /tokenize stays for answers without them.
    config: { blockSize, capacityBlocks, replicaCapacityBlocks, sharedFrom: semantics.shared_from, slots: semantics.slots ?? undefined, serverTokens: serverSpec, idsFromResponse: serverSpec?.kind === 'vllm' },
    description: {
      block_size: blockSize,
      capacity_model: capacityBlocks === undefined ? 'infinite' : 'lru',
      capacity_tokens: capacityBlocks === undefined ? null : capacityBlocks * blockSize,
      capacity_source: source,
      ...(replicaCapacityBlocks === undefined ? {} : { replica_capacity_tokens: replicaCapacityBlocks * blockSize }),
      // One index whatever the threads: with --workers the coordinator owns it (index-owner.ts, issue #31).
      scope: 'global',
      token_ids: ids,
      semantics,
    },
    tokenizer: serverSpec === undefined ? undefined : serverTokenizerLabel(serverSpec.kind),
    exact: serverSpec !== undefined || input.counter.tokenizer.exact,
  };
}

/**
 * The model with --scrape-metrics repeated (one page per replica behind a router), once the pages' first scrapes are
 * in: when two or more of them state a KV capacity, the one ideal cache holds their sum and each replica's pool a
 * page's share, where the probed page alone (the first) gave one replica's room for the fleet. Unchanged with
 * --kv-cache-tokens, with a first page that already sums its replicas (a router's), or with fewer than two stating one.
 */
export function withReplicaPages(setup: CacheModelSetup, pages: ReadonlyArray<ServerKvCapacity | undefined>): CacheModelSetup {
  const { description } = setup;
  if (description.capacity_source === '--kv-cache-tokens' || (pages[0]?.replicas ?? 1) > 1) return setup;
  const stated = pages.filter((c): c is ServerKvCapacity => c !== undefined && c.replicas === 1);
  if (stated.length < 2) return setup;
  const blockSize = setup.config.blockSize;
  const capacityBlocks = Math.max(1, Math.floor(stated.reduce((sum, c) => sum + c.blocks * c.blockSize, 0) / blockSize));
  const replicaCapacityBlocks = Math.max(1, Math.floor(capacityBlocks / stated.length));
  return {
    ...setup,
    config: { ...setup.config, capacityBlocks, replicaCapacityBlocks },
    description: {
      ...description,
      capacity_model: 'lru',
      capacity_tokens: capacityBlocks * blockSize,
      capacity_source: `${stated[0]!.source}, summed over ${stated.length} --scrape-metrics pages`,
      replica_capacity_tokens: replicaCapacityBlocks * blockSize,
    },
  };
}

/**
 * The run's `prefix_cache` from its tally (RunAggregate): nulled where the model's counts cannot be compared with the
 * server's (the summary's efficiency too, as the tally's), and one warning when a warm cache served tokens the run
 * cannot explain. `resetAsked`: --reset-prefix-cache was given.
 */
export function runPrefixCacheOf(setup: CacheModelSetup, tally: PrefixCacheSummary, summary: Summary, resetAsked: boolean, warn: (message: string) => void): RunPrefixCache {
  const prefixCache = runPrefixCache(tally, setup.description, setup.exact);
  if (prefixCache.comparable === false) summary.cache_efficiency = null;
  const warm = prefixCache.totals.warm_start_tokens;
  if (warm > 0) {
    // llama.cpp's slot erase leaves its host-memory prompt cache full (seen on a live llama-server), and it has no
    // endpoint that empties it.
    const llamacpp = setup.description.semantics?.engine === 'llamacpp';
    const hint = !resetAsked
      ? `pass --reset-prefix-cache to start cold${llamacpp ? " (llama.cpp: and restart llama-server or run it with --cache-ram 0, since erasing its slots leaves its host-memory prompt cache)" : ''}`
      : llamacpp
        ? 'although its slots were erased: llama.cpp keeps its host-memory prompt cache (--cache-ram) through an erase; restart llama-server, or run it with --cache-ram 0, to start cold'
        : 'although its cache was reset before the run';
    warn(`the server's prefix cache was warm: it served ${warm} cached tokens beyond anything this run had sent (prefix_cache warm_start_tokens), kept out of efficiency and the misses; ${hint}`);
  }
  return prefixCache;
}
