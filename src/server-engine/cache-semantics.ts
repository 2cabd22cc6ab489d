import { jsonOf, type ProbeAnswer } from './probe.js';
import type { EngineName } from './profiles.js';

/*
 * How an engine's prefix cache reuses a prompt (issue #30), as the expected-cache model runs it. Each value is read
 * from the server where it says it, else the engine's documented default, and says where it came from. Sources (facts
 * read from each engine's code; docs/ENGINES.md, "Cache semantics"):
 * - vLLM: one global cache of `block_size`-token blocks (default 16; `vllm:cache_config_info` labels state it), a
 *   prompt looked up when the scheduler admits it, at least the last prompt token computed
 *   (vllm/v1/core/kv_cache_manager.py, get_computed_blocks). A block is shared from the step it is scheduled in:
 *   allocate_slots caches each full block it allocates for the step's tokens (`cache_blocks`), "so that the block can
 *   be reused by other requests in the same batch" (docs/design/prefix_caching.md): a request admitted after another
 *   in the same step hits its prompt (`schedule`).
 * - SGLang: one global radix cache matched in pages of `page_size` tokens (default 1; GET /server_info's top-level
 *   `page_size`). A request's tokens join the tree after its prefill step, so requests prefilled in one batch do not
 *   hit each other (`prefill`; its LPM policy puts such a request off to a later batch for that reason:
 *   python/sglang/srt/managers/schedule_policy.py, IN_BATCH_PREFIX_CACHING_*;
 *   python/sglang/srt/mem_cache/radix_cache.py).
 * - llama.cpp: token granular. Each slot keeps its last prompt and generated tokens, and a request reuses the longest
 *   common prefix with the slot it gets; the slot is picked on arrival (the idle slot with the most similar prompt,
 *   else the least recently used), and its tokens are another request's only once its own request ended. Current
 *   builds save idle slots' states to a host-memory prompt cache (--cache-ram, default 8192 MiB) that any slot
 *   restores from, so the prefix of any finished request can be reused: one cache, shared at a request's end
 *   (tools/server/server-context.cpp get_available_slot, tools/server/server-task.cpp, server_prompt_cache).
 *   The slot count is GET /props `total_slots`.
 */

/** When a request's prompt is another's (CacheSemantics.shared_from). */
export type SharedFrom = 'schedule' | 'prefill' | 'end';

/** The semantics of the expected-cache model, as results.json states them (`prefix_cache.model.semantics`). */
export interface CacheSemantics {
  /** The engine whose semantics these are. */
  engine: EngineName;
  /** Tokens per unit the cache matches in. */
  block_size: number;
  /**
   * When a request's prompt becomes reusable by others: from the engine step it is scheduled in, by requests admitted
   * after it in that step too (`schedule`, vLLM); once that step is done, not by its batch-mates (`prefill`, SGLang);
   * once its request ends (`end`, llama.cpp).
   */
  shared_from: SharedFrom;
  /** llama.cpp's slots (GET /props `total_slots`); null for engines without slots. */
  slots: number | null;
  /** Where each value came from, e.g. `block_size: vllm:cache_config_info`. */
  sources: string[];
}

/** What the server said of itself, as engine detection read it. */
export interface SemanticsAnswers {
  /** The block size its /metrics page states (vLLM's cache_config_info), when it does. */
  metricsBlockSize?: { blockSize: number; source: string };
  props?: ProbeAnswer;
  serverInfo?: ProbeAnswer;
  /** The /metrics page: the simulator states its semantics there (`chatload_sim_cache_semantics_info`). */
  metricsText?: string;
}

/** A positive integer field of a JSON object answer, when it has one. */
function intField(answer: ProbeAnswer | undefined, field: string): number | undefined {
  if (answer === undefined || answer.status !== 200) return undefined;
  const value = (jsonOf(answer) as Record<string, unknown> | undefined)?.[field];
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** The cache semantics of `engine`, from what it said (see the comment at the top). Pure. */
export function cacheSemantics(engine: EngineName, answers: SemanticsAnswers): CacheSemantics {
  if (engine === 'llamacpp') {
    const slots = intField(answers.props, 'total_slots');
    return {
      engine,
      block_size: 1,
      shared_from: 'end',
      slots: slots ?? null,
      sources: ['block_size: llama.cpp reuses a prefix token by token', 'shared_from: a slot is reusable once its request ends (host-memory prompt cache)', slots === undefined ? 'slots: GET /props had no total_slots' : 'slots: GET /props total_slots'],
    };
  }
  if (engine === 'sglang') {
    const page = intField(answers.serverInfo, 'page_size');
    const block = page === undefined ? "block_size: SGLang's default page_size (GET /server_info did not say)" : 'block_size: GET /server_info page_size';
    return { engine, block_size: page ?? 1, shared_from: 'prefill', slots: null, sources: [block, 'shared_from: SGLang\'s (the radix tree takes a prompt after its prefill step)'] };
  }
  const stated = answers.metricsBlockSize ?? (engine === 'dynamo' ? dynamoBlockSize(answers.metricsText) : undefined);
  const simulated = engine === 'chatload-sim' ? /^chatload_sim_cache_semantics_info\{[^}]*semantics="(\w+)"/m.exec(answers.metricsText ?? '')?.[1] : undefined;
  if (simulated === 'llamacpp') {
    const sources = [stated === undefined ? 'block_size: 1, llama.cpp\'s' : `block_size: ${stated.source}`, 'shared_from: chatload_sim_cache_semantics_info (llamacpp)'];
    return { engine, block_size: stated?.blockSize ?? 1, shared_from: 'end', slots: null, sources };
  }
  // vLLM's, or the simulator's vLLM-like engine run with SGLang's sharing (--cache-semantics sglang).
  const sglang = simulated === 'sglang';
  return {
    engine,
    block_size: stated?.blockSize ?? 16,
    shared_from: sglang ? 'prefill' : 'schedule',
    slots: null,
    sources: [
      stated === undefined ? "block_size: vLLM's default (the server did not say)" : `block_size: ${stated.source}`,
      sglang
        ? 'shared_from: chatload_sim_cache_semantics_info (sglang)'
        : engine === 'dynamo'
          ? "shared_from: vLLM's (NVIDIA Dynamo's frontend does not say which engine its workers run)"
          : "shared_from: vLLM's (a block is cached as it is allocated)",
    ],
  };
}

/**
 * The block size NVIDIA Dynamo's frontend states for its workers' model: the gauge `dynamo_frontend_model_kv_cache_block_size`
 * (lib/runtime/src/metrics/prometheus_names.rs, frontend_service::MODEL_KV_CACHE_BLOCK_SIZE), the first positive one.
 */
function dynamoBlockSize(metricsText: string | undefined): { blockSize: number; source: string } | undefined {
  const match = /^dynamo_frontend_model_kv_cache_block_size(?:\{[^}]*\})?\s+([0-9]+(?:\.0*)?)\s*$/m.exec(metricsText ?? '');
  const blockSize = match === null ? NaN : Number(match[1]);
  return Number.isInteger(blockSize) && blockSize > 0 ? { blockSize, source: 'dynamo_frontend_model_kv_cache_block_size' } : undefined;
}
