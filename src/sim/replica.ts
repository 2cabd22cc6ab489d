import type { SimConfig } from './config.js';
import { realClock } from './clock.js';
import { Scheduler } from './scheduler.js';
import { SimMetrics } from './metrics.js';
import { OutputPump } from './output-pump.js';
import type { Exchange, ExchangeContext } from './request-exchange.js';
import type { TraceLine } from './request-trace.js';
import type { WordVocabulary } from './words.js';

/** Everything one replica needs: its index, the engine's config, the seed, and where its exchanges report their end. */
export interface SimReplicaOptions {
  index: number;
  config: SimConfig;
  seed: number;
  modelName: string;
  vocabulary: WordVocabulary;
  /** Called once per exchange that ends on this replica, with its trace line (the replica index filled in). */
  done(exchange: Exchange, line: TraceLine): void;
}

/**
 * One simulated engine behind the router (issue #31): its own Scheduler (step loop, waiting queue), its own paged KV
 * cache with prefix caching (the Scheduler's `kv`), its own Prometheus registry (`/replicas/<i>/metrics`) and its own
 * output pump. Replicas share the event loop and the HTTP server; nothing else. Every replica runs with the same seed,
 * as identical replicas serve the same model: an answer depends on the prompt, not on the replica that wrote it, so
 * routers compare on the same conversations.
 */
export class SimReplica implements ExchangeContext {
  readonly index: number;
  readonly scheduler: Scheduler;
  readonly metrics: SimMetrics;
  readonly modelName: string;
  readonly outputs = new OutputPump();
  readonly #done: (exchange: Exchange, line: TraceLine) => void;

  constructor(options: SimReplicaOptions) {
    this.index = options.index;
    this.modelName = options.modelName;
    this.metrics = new SimMetrics(options.modelName, () => this.scheduler);
    this.scheduler = new Scheduler(options.config, realClock, { seed: options.seed, observer: this.metrics, vocabulary: options.vocabulary });
    this.#done = options.done;
  }

  /** Requests in flight here: admitted plus waiting (the load the routers balance, as SGLang's router counts pending requests). */
  get load(): number {
    return this.scheduler.numRunning + this.scheduler.numWaiting;
  }

  /** Blocks holding a cached prefix here (SGLang's cache-aware router's "tree size"). */
  get cachedBlocks(): number {
    return this.scheduler.kv.numCached;
  }

  /**
   * How many blocks of a prompt of `promptTokens` tokens this replica's KV cache holds from the start, block i's hash
   * being `hashAt(i)`: the hit the Scheduler would find now, capped as it caps it (at least one token computed).
   */
  prefixHitBlocks(promptTokens: number, hashAt: (block: number) => number): number {
    const { config, kv } = this.scheduler;
    if (!config.enable_prefix_caching) return 0;
    return kv.lookup(Math.floor((promptTokens - 1) / config.block_size), hashAt).length;
  }

  /** ExchangeContext: an exchange served here ended. */
  done(exchange: Exchange, line: TraceLine): void {
    this.#done(exchange, { ...line, replica: this.index });
  }

  /** Stops the step loop and the event-loop monitor (the server is closing). */
  stop(): void {
    this.scheduler.stop();
  }

  close(): void {
    this.metrics.close();
  }
}
