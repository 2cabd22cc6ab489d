/*
 * The engine's request type and the interfaces between the engine and the HTTP layer (see engine.ts).
 */

/** Why a request ended: `stop` (EOS model), `length` (output budget), `abort` (client went away). */
export type FinishReason = 'stop' | 'length' | 'abort';

/** What the HTTP layer asks the engine to generate. */
export interface SchedulerRequestSpec {
  /**
   * Prompt token ids (chat template applied); the engine copies them, unless `ownIds` gives them up: then a
   * Uint32Array whose buffer has room past them for the output target is kept as the request's tokens, uncopied.
   */
  promptIds: ArrayLike<number>;
  /**
   * The caller holds `promptIds` no more (a fresh array of the encoder's): the engine may keep it (see promptIds).
   * Copying a 1.2M-id prompt into a fresh array held the loop ~2 ms in one piece (issue #14).
   */
  ownIds?: boolean;
  /** promptHash(promptIds), when the caller made it (in steps: promptHashYielding); made at submit otherwise. */
  promptHash?: number;
  /** Output budget in tokens (already checked against max_model_len). */
  maxTokens: number;
  /** Floor for the EOS model's sampled length (tokens). */
  minTokens?: number;
  /** Disables the EOS model. */
  ignoreEos?: boolean;
  /** 0 = greedy: the answer depends on the prompt only. Otherwise a fresh answer per request unless `seed` is set. */
  temperature?: number;
  seed?: number;
}

/** Receives a request's output as each step ends. Times are Clock ms. */
export interface SchedulerRequestListener {
  /** One generated token; `finishReason` is set on the request's last token (onFinish follows at once). */
  onToken(text: string, index: number, atMs: number, finishReason: 'stop' | 'length' | null): void;
  onFinish(reason: 'stop' | 'length', atMs: number): void;
}

/** Hooks for Prometheus metrics. Durations in ms. */
export interface SchedulerObserver {
  /** A request's first scheduling: its prompt looked up in the prefix cache. */
  onAdmit?(queriedTokens: number, hitTokens: number): void;
  /** A preempted request scheduled again: what it found of its own blocks is not a prefix-cache hit (see #schedule). */
  onReadmit?(queriedTokens: number, hitTokens: number): void;
  onPreempt?(): void;
  onPrefillDone?(promptTokens: number, ttftMs: number): void;
  onToken?(interTokenMs: number | null): void;
  onFinish?(reason: FinishReason, e2eMs: number): void;
}

/** Why the engine refused a request at submit; `status` is the HTTP status to answer with. */
export class SchedulerRejection extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'SchedulerRejection';
    this.status = status;
  }
}

/** A request inside the engine. Read-only to callers; token counts in tokens, times in Clock ms. */
export class SchedulerRequest {
  /** Scheduler-local sequence number (admission order of arrival). */
  readonly id: number;
  readonly promptTokens: number;
  readonly arrivalMs: number;
  /** Output length it will stop at, and why. */
  readonly targetTokens: number;
  readonly plannedReason: 'stop' | 'length';
  /**
   * Prompt + generated token ids: `[0, tokenCount)` holds them. Room for the prompt and the output target is made
   * at once: copying a 3 MB prompt's million ids into a growing JS array took ~5 ms in one piece (issue #14).
   */
  readonly tokens: Uint32Array;
  tokenCount: number;
  state: 'waiting' | 'running' | 'finished' | 'aborted' = 'waiting';
  /** Tokens whose KV is computed. */
  numComputed = 0;
  /** Prompt tokens the prefix cache supplied at the last admission. */
  cachedTokens = 0;
  outputTokens = 0;
  preemptions = 0;
  firstTokenMs: number | null = null;
  lastTokenMs: number | null = null;
  readonly blocks: number[] = [];
  /** Hashes of the full blocks of `tokens` computed so far (lazily extended). */
  readonly blockHashes: number[] = [];
  /** Leading blocks already registered in the cache. */
  numRegistered = 0;
  /** True between the first token after an admission and the next preemption: steps are decodes. */
  decoding = false;
  readonly key: number;
  readonly listener: SchedulerRequestListener;

  constructor(id: number, spec: SchedulerRequestSpec, target: number, reason: 'stop' | 'length', key: number, arrivalMs: number, listener: SchedulerRequestListener) {
    this.id = id;
    this.promptTokens = spec.promptIds.length;
    this.tokens = tokensFor(spec, spec.promptIds.length + target);
    this.tokenCount = spec.promptIds.length;
    this.targetTokens = target;
    this.plannedReason = reason;
    this.key = key;
    this.arrivalMs = arrivalMs;
    this.listener = listener;
  }
}

/** The request's token array: `spec.promptIds` kept when given up with room for `length` ids, or a copy of them. */
function tokensFor(spec: SchedulerRequestSpec, length: number): Uint32Array {
  const ids = spec.promptIds;
  if (spec.ownIds === true && ids instanceof Uint32Array && ids.buffer.byteLength - ids.byteOffset >= length * 4) {
    const tokens = new Uint32Array(ids.buffer, ids.byteOffset, length);
    // The room past the prompt may hold a previous use's ids: the output starts from zeros, as a fresh array would.
    tokens.fill(0, ids.length);
    return tokens;
  }
  const tokens = new Uint32Array(length);
  tokens.set(ids);
  return tokens;
}

/** Counters and gauges of the engine (tokens, blocks, events). */
export interface SchedulerStats {
  running: number;
  waiting: number;
  kvUsage: number;
  cachedBlocks: number;
  evictions: number;
  preemptions: number;
  prefixQueriedTokens: number;
  prefixHitTokens: number;
  steps: number;
}
