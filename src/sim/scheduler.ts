import type { Clock, TimerHandle } from './clock.js';
import type { SimConfig } from './config.js';
import { SchedulerRejection, SchedulerRequest, type SchedulerObserver, type SchedulerRequestListener, type SchedulerRequestSpec, type SchedulerStats } from './scheduler-types.js';
import { KvCache, ROOT_BLOCK_HASH, blockHash } from './kv-cache.js';
import { APPROX_VOCABULARY, chooseWord, mix3, type WordVocabulary } from './words.js';
import { counted } from '../util/plural.js';

/*
 * The simulated continuous-batching engine (vLLM v1's scheduler, simplified). Pure logic over a Clock: one timer
 * for the next step, never one per request. Each step schedules running requests first (a decode takes one token,
 * an unfinished prefill takes a chunk of the remaining budget), then admits waiting requests FCFS while budget,
 * KV blocks and max_num_seqs allow. The step lasts stepDurationMs(...); when it ends, requests whose prefill
 * completed emit their first token and decoding requests emit one token each. docs/SIMULATOR.md has the equations.
 */

export {
  SchedulerRejection,
  SchedulerRequest,
  type SchedulerObserver,
  type SchedulerRequestListener,
  type SchedulerRequestSpec,
  type SchedulerStats,
  type FinishReason,
} from './scheduler-types.js';

/** The step time model, ms: base + prefill tokens, decoding sequences and their context tokens, each at its rate. */
export function stepDurationMs(config: SimConfig, prefillTokens: number, decodeSeqs: number, decodeContextTokens: number): number {
  return (
    config.step_base_ms +
    prefillTokens * config.prefill_ms_per_token +
    decodeSeqs * config.decode_ms_per_seq +
    decodeContextTokens * config.attention_ms_per_token
  );
}

/**
 * The output budget of a request, or vLLM's context-length error text. Without max_tokens it is
 * min(default_max_tokens, max_model_len - prompt).
 */
export function resolveOutputBudget(config: SimConfig, promptTokens: number, maxTokens: number | undefined): { budget: number } | { error: string } {
  const requested = maxTokens ?? Math.min(config.default_max_tokens, config.max_model_len - promptTokens);
  if (promptTokens + requested > config.max_model_len || requested < 1) {
    const max = maxTokens ?? Math.max(requested, 0);
    return {
      error:
        `This model's maximum context length is ${config.max_model_len} tokens. However, you requested ` +
        `${promptTokens + max} tokens (${promptTokens} in the messages, ${max} in the completion). ` +
        'Please reduce the length of the messages or completion.',
    };
  }
  return { budget: requested };
}

const PROMPT_HASH_SEED = 0x811c9dc5;

/** FNV-1a over `ids[from, to)` continued from `h`: one step of promptHash. */
function hashIdsFrom(h: number, ids: ArrayLike<number>, from: number, to: number): number {
  for (let i = from; i < to; i++) h = Math.imul(h ^ ids[i]!, 0x01000193);
  return h;
}

/** The hash of a whole prompt's ids: a greedy request's answer depends on it (and the EOS model's length). */
export function promptHash(ids: ArrayLike<number>): number {
  return hashIdsFrom(PROMPT_HASH_SEED, ids, 0, ids.length) >>> 0;
}

/** Ids hashed per step of promptHashYielding (~0.3 ms); a prompt no longer than this is hashed in one. */
export const PROMPT_HASH_STEP_IDS = 256 * 1024;

/**
 * promptHash in steps of PROMPT_HASH_STEP_IDS ids that let the loop go between them, via `yieldToLoop`: a 1.2M-id prompt
 * hashed at submit held it ~2.5 ms (issue #14). Short prompts are hashed at once.
 */
export async function promptHashYielding(ids: ArrayLike<number>, yieldToLoop: () => Promise<void>): Promise<number> {
  let h = PROMPT_HASH_SEED;
  for (let from = 0; from < ids.length; from += PROMPT_HASH_STEP_IDS) {
    if (from > 0) await yieldToLoop();
    h = hashIdsFrom(h, ids, from, Math.min(ids.length, from + PROMPT_HASH_STEP_IDS));
  }
  return h >>> 0;
}

interface ScheduledWork {
  req: SchedulerRequest;
  tokens: number;
}

/** The engine. One per simulator; all times come from the injected Clock. */
export class Scheduler {
  readonly config: SimConfig;
  readonly kv: KvCache;
  readonly #clock: Clock;
  readonly #seed: number;
  readonly #observer: SchedulerObserver;
  #running: SchedulerRequest[] = [];
  /** FIFO with a moving head, so admission is O(1) and preempted requests can go back to the front. */
  #waiting: SchedulerRequest[] = [];
  #waitingHead = 0;
  #timer: TimerHandle | null = null;
  /** True while a step's results are emitted: a submit from a callback must not start a second timer. */
  #emitting = false;
  #nextId = 0;
  #preemptions = 0;
  #queried = 0;
  #hits = 0;
  #steps = 0;
  readonly #vocabulary: WordVocabulary;

  /**
   * `vocabulary`: the generated words and their token ids, built for the tokenizer the server encodes prompts with
   * (wordVocabulary), so answers re-encode to the ids the engine cached. @default the approximate tokenizer's
   */
  constructor(config: SimConfig, clock: Clock, options: { seed?: number; observer?: SchedulerObserver; vocabulary?: WordVocabulary } = {}) {
    this.config = config;
    this.kv = new KvCache(config.num_gpu_blocks);
    this.#clock = clock;
    this.#seed = options.seed ?? 0;
    this.#observer = options.observer ?? {};
    this.#vocabulary = options.vocabulary ?? APPROX_VOCABULARY;
  }

  /** Number of requests waiting for admission. */
  get numWaiting(): number {
    return this.#waiting.length - this.#waitingHead;
  }

  /** Number of requests admitted (prefilling or decoding). */
  get numRunning(): number {
    return this.#running.length;
  }

  /** A snapshot of the counters. */
  stats(): SchedulerStats {
    return {
      running: this.numRunning,
      waiting: this.numWaiting,
      kvUsage: this.kv.usage,
      cachedBlocks: this.kv.numCached,
      evictions: this.kv.evictions,
      preemptions: this.#preemptions,
      prefixQueriedTokens: this.#queried,
      prefixHitTokens: this.#hits,
      steps: this.#steps,
    };
  }

  /** Queues a request. Throws SchedulerRejection: 503 when the waiting queue is full, 400 when it could never fit in KV. */
  submit(spec: SchedulerRequestSpec, listener: SchedulerRequestListener): SchedulerRequest {
    const { config } = this;
    const totalBlocks = Math.ceil((spec.promptIds.length + spec.maxTokens) / config.block_size);
    if (totalBlocks > config.num_gpu_blocks) {
      throw new SchedulerRejection(
        400,
        `The request needs ${totalBlocks} KV cache blocks (${spec.promptIds.length} prompt + ${spec.maxTokens} completion tokens) ` +
          `but the simulated KV cache has only ${config.num_gpu_blocks} blocks of ${config.block_size} tokens.`,
      );
    }
    if (config.max_waiting !== null && this.numWaiting >= config.max_waiting) {
      throw new SchedulerRejection(503, `The server is overloaded: ${counted(this.numWaiting, 'request')} ${this.numWaiting === 1 ? 'is' : 'are'} already waiting (max_waiting ${config.max_waiting}).`);
    }
    const id = this.#nextId++;
    const hash = spec.promptHash ?? promptHash(spec.promptIds);
    const greedy = spec.temperature === 0;
    const key = greedy ? hash : mix3(hash, spec.seed ?? id, spec.seed === undefined ? 1 : 2);
    let target = spec.maxTokens;
    let reason: 'stop' | 'length' = 'length';
    if (config.eos !== null && spec.ignoreEos !== true) {
      const { min, max } = config.eos;
      const eosLen = Math.max(min + (mix3(this.#seed, key, 0x3e05) % (max - min + 1)), spec.minTokens ?? 0);
      if (eosLen < target) {
        target = eosLen;
        reason = 'stop';
      }
    }
    const req = new SchedulerRequest(id, spec, target, reason, key, this.#clock.now(), listener);
    this.#waiting.push(req);
    this.#kick();
    return req;
  }

  /** Removes a request (client went away), freeing its blocks. No more callbacks are made for it. */
  abort(req: SchedulerRequest): void {
    if (req.state === 'finished' || req.state === 'aborted') return;
    if (req.state === 'running') {
      const i = this.#running.indexOf(req);
      if (i !== -1) this.#running.splice(i, 1);
    } else {
      const i = this.#waiting.indexOf(req, this.#waitingHead);
      if (i !== -1) this.#waiting.splice(i, 1);
    }
    req.state = 'aborted';
    this.kv.release(req.blocks);
    req.blocks.length = 0;
    this.#observer.onFinish?.('abort', this.#clock.now() - req.arrivalMs);
  }

  /** Drops every unreferenced cached block. Returns the number dropped. */
  resetPrefixCache(): number {
    return this.kv.resetPrefixCache();
  }

  /** Stops the step loop (the server is closing); pending requests get no more callbacks. */
  stop(): void {
    if (this.#timer !== null) this.#clock.clearTimer(this.#timer);
    this.#timer = null;
    for (const req of [...this.#running, ...this.#waiting.slice(this.#waitingHead)]) this.abort(req);
  }

  #kick(): void {
    if (this.#timer !== null || this.#emitting) return;
    const atMs = this.#clock.now();
    // A timer rather than a synchronous step: arrivals in the same event-loop turn join one batch.
    this.#timer = this.#clock.setTimer(atMs, () => {
      this.#timer = null;
      this.#startStep(this.#clock.now());
    });
  }

  #startStep(atMs: number): void {
    const work = this.#schedule();
    if (work.length === 0) return;
    let prefill = 0;
    let decodes = 0;
    let context = 0;
    for (const w of work) {
      if (w.req.decoding) {
        decodes += 1;
        context += w.req.numComputed + 1;
      } else prefill += w.tokens;
    }
    const endMs = atMs + stepDurationMs(this.config, prefill, decodes, context);
    this.#steps += 1;
    // Absolute target times: the next step starts at this one's logical end, so timer lateness never accumulates
    // (if the loop is behind, the next timer is already due and fires at once).
    this.#timer = this.#clock.setTimer(endMs, () => {
      this.#timer = null;
      this.#emitting = true;
      try {
        this.#finishStep(work);
      } finally {
        this.#emitting = false;
      }
      if (this.#running.length > 0 || this.numWaiting > 0) this.#startStep(endMs);
    });
  }

  #hashesFor(req: SchedulerRequest, fullBlocks: number): readonly number[] {
    const bs = this.config.block_size;
    for (let b = req.blockHashes.length; b < fullBlocks; b++) {
      const parent = b === 0 ? ROOT_BLOCK_HASH : req.blockHashes[b - 1]!;
      req.blockHashes.push(blockHash(parent, req.tokens, b * bs, bs));
    }
    return req.blockHashes;
  }

  #preempt(victim: SchedulerRequest): void {
    this.kv.release(victim.blocks);
    victim.blocks.length = 0;
    victim.numComputed = 0;
    victim.numRegistered = 0;
    victim.decoding = false;
    victim.state = 'waiting';
    victim.preemptions += 1;
    this.#preemptions += 1;
    this.#observer.onPreempt?.();
    if (this.#waitingHead > 0) this.#waiting[--this.#waitingHead] = victim;
    else this.#waiting.unshift(victim);
  }

  #schedule(): ScheduledWork[] {
    const { config, kv } = this;
    const bs = config.block_size;
    const work: ScheduledWork[] = [];
    let budget = config.max_num_batched_tokens;
    let preempted = false;
    for (let i = 0; i < this.#running.length && budget > 0; i++) {
      const req = this.#running[i]!;
      const n = Math.min(req.tokenCount - req.numComputed, budget);
      const needed = Math.ceil((req.numComputed + n) / bs) - req.blocks.length;
      let fresh = kv.allocate(needed);
      while (fresh === null) {
        // Out of blocks: preempt the latest-admitted running request (recompute), as vLLM v1 does.
        const victim = this.#running.pop()!;
        this.#preempt(victim);
        preempted = true;
        if (victim === req) break;
        fresh = kv.allocate(needed);
      }
      if (fresh === null) break;
      req.blocks.push(...fresh);
      this.#registerScheduled(req, n);
      budget -= n;
      work.push({ req, tokens: n });
    }
    if (preempted) return work;
    while (this.numWaiting > 0 && this.#running.length < config.max_num_seqs && budget > 0) {
      const req = this.#waiting[this.#waitingHead]!;
      const len = req.tokenCount;
      let hits: number[] = [];
      if (config.enable_prefix_caching) {
        // Capped so at least one token is computed (the last one yields the next token's logits), in whole blocks.
        const maxHitBlocks = Math.floor((len - 1) / bs);
        // Each block's hash is made only once the blocks before it hit: hashing all of a 1.2M-token prompt's 75,000
        // blocks first held the loop ~5-10 ms for a lookup that usually stops early (issue #14); the rest are hashed
        // as prefill fills them.
        hits = kv.lookup(maxHitBlocks, (b) => this.#hashesFor(req, b + 1)[b]);
      }
      const hitTokens = hits.length * bs;
      const n = Math.min(len - hitTokens, budget);
      const needed = Math.ceil((hitTokens + n) / bs) - hits.length;
      if (kv.numAvailable - kv.countUnreferenced(hits) < needed) break;
      kv.acquire(hits);
      req.blocks.push(...hits, ...kv.allocate(needed)!);
      req.numComputed = hitTokens;
      req.numRegistered = hits.length;
      req.state = 'running';
      // vLLM records a request's cached tokens once, at its first scheduling (Request.num_cached_tokens in
      // vllm/v1/core/sched/scheduler.py): a preempted request's readmission finds the blocks it computed before
      // it was preempted, and counting those as hits made preemption read as prefix-cache hits (issue #30).
      if (req.preemptions === 0) {
        req.cachedTokens = hitTokens;
        this.#queried += len;
        this.#hits += hitTokens;
        this.#observer.onAdmit?.(len, hitTokens);
      } else this.#observer.onReadmit?.(len, hitTokens);
      this.#waitingHead += 1;
      this.#running.push(req);
      this.#registerScheduled(req, n);
      budget -= n;
      work.push({ req, tokens: n });
    }
    if (this.#waitingHead > 1024 && this.#waitingHead * 2 > this.#waiting.length) {
      this.#waiting = this.#waiting.slice(this.#waitingHead);
      this.#waitingHead = 0;
    }
    return work;
  }

  /**
   * vLLM caches a request's full blocks as it allocates them for the step's tokens, before the step runs
   * (KVCacheManager.allocate_slots -> cache_blocks in vllm/v1/core/kv_cache_manager.py), "so that the block can be
   * reused by other requests in the same batch" (docs/design/prefix_caching.md): a request admitted after it in this
   * step hits them. SGLang's wait for the step's end (#finishStep), llama.cpp's for the request's (#registerFull).
   */
  #registerScheduled(req: SchedulerRequest, tokens: number): void {
    if (this.config.cache_semantics === 'vllm') this.#registerFull(req, req.numComputed + tokens);
  }

  #registerFull(req: SchedulerRequest, tokens: number): void {
    if (!this.config.enable_prefix_caching) return;
    // llama.cpp: a request's tokens are another's only once it ends (its slot released), registered then alone.
    if (this.config.cache_semantics === 'llamacpp' && req.state === 'running') return;
    const full = Math.floor(tokens / this.config.block_size);
    if (full <= req.numRegistered) return;
    const hashes = this.#hashesFor(req, full);
    for (let b = req.numRegistered; b < full; b++) this.kv.register(req.blocks[b]!, hashes[b]!);
    req.numRegistered = full;
  }

  #finishStep(work: ScheduledWork[]): void {
    const nowMs = this.#clock.now();
    let finished = false;
    for (const { req, tokens } of work) {
      // A request aborted (or preempted and re-queued) while the step ran is skipped.
      if (req.state !== 'running') continue;
      req.numComputed += tokens;
      this.#registerFull(req, req.numComputed);
      if (req.numComputed < req.tokenCount) continue; // chunked prefill continues next step
      const position = req.outputTokens;
      const word = chooseWord(this.#seed, req.key, position, this.#vocabulary.size);
      req.tokens[req.tokenCount++] = this.#vocabulary.id(word, position);
      req.outputTokens += 1;
      req.decoding = true;
      if (req.firstTokenMs === null) {
        req.firstTokenMs = nowMs;
        this.#observer.onPrefillDone?.(req.promptTokens, nowMs - req.arrivalMs);
        this.#observer.onToken?.(null);
      } else {
        this.#observer.onToken?.(nowMs - req.lastTokenMs!);
      }
      req.lastTokenMs = nowMs;
      const done = req.outputTokens >= req.targetTokens;
      if (done) {
        req.state = 'finished';
        // The last token's KV slot is already allocated (it is the next decode's input); count it as written so the
        // whole answer stays cached for the next turn, as the brief's model says. llama.cpp never decodes its last
        // sampled token: an EOS after a stop (not in the text), else the answer's own last token.
        const llamacpp = this.config.cache_semantics === 'llamacpp';
        this.#registerFull(req, req.tokenCount - (llamacpp && req.plannedReason === 'length' ? 1 : 0));
        this.kv.release(req.blocks);
        req.blocks.length = 0;
        finished = true;
      }
      req.listener.onToken(this.#vocabulary.text(word, position), position, nowMs, done ? req.plannedReason : null);
      if (done) {
        this.#observer.onFinish?.(req.plannedReason, nowMs - req.arrivalMs);
        req.listener.onFinish(req.plannedReason, nowMs);
      }
    }
    if (finished) this.#running = this.#running.filter((r) => r.state === 'running');
  }
}
