import type { Rng } from '../../util/rng.js';
import type { ActiveConversation } from '../active-conversation.js';
import type { ConcurrencyLimit } from '../concurrency-limit.js';
import { sleep } from '../sleep.js';
import { takeTurn, type TurnContext } from '../turn.js';
import type { WorkPool } from '../work-pool.js';
import { settle } from './settle.js';

/**
 * One session of an open loop (open-sessions, fixed-schedule), turn by turn: each turn waits for a --max-concurrency
 * slot (reported as queued, recorded as queue time), takes one request from the -n budget, and is sent with the time
 * it was meant to go (`scheduledAtMs`), so lag shows. After an answer `nextAtMs` says when the next turn is due
 * (performance.now() ms). The session ends on a failed turn, when its conversation is done, at a stop, or when a turn
 * finds the --max-queue full: that request is dropped, not sent, and the conversation counted dropped.
 */
export async function runSessionTurns(
  ctx: TurnContext,
  pool: WorkPool,
  limit: ConcurrencyLimit | undefined,
  conversation: ActiveConversation,
  session: number,
  rng: Rng,
  firstAtMs: number,
  nextAtMs: (conversation: ActiveConversation, rng: Rng) => number,
): Promise<void> {
  const stopping = ctx.stop.stopping;
  let scheduledAtMs = firstAtMs;
  for (;;) {
    let queueMs: number | null = 0;
    if (limit?.full === true) return pool.drop(conversation);
    if (limit !== undefined) {
      ctx.observer.onQueued?.(1);
      queueMs = await limit.acquire(stopping);
      ctx.observer.onQueued?.(-1);
    }
    if (queueMs === null) return; // the run stopped while it queued
    let outcome;
    try {
      if (stopping.aborted) return;
      outcome = await takeTurn(ctx, { conversation, clientId: session, rng, warmup: false, schedule: { scheduledAtMs, queueMs } });
    } finally {
      limit?.release();
    }
    if (outcome === 'budget_spent' || !settle(pool, conversation, outcome)) return;
    scheduledAtMs = nextAtMs(conversation, rng);
    if (!(await sleep(scheduledAtMs - performance.now(), stopping))) return;
  }
}

/**
 * The open loops' sessions in flight: each started in the background, a crash handed to `onCrash` with its
 * conversation counted failed, and `ended()` resolving once arrivals are over and the last session has ended.
 * Sessions are counted, not kept in a list, so a long run's memory does not grow with every session.
 */
export class SessionsInFlight {
  readonly #pool: WorkPool;
  readonly #onCrash: (what: string, error: unknown) => void;
  #open = 0;
  #arrivalsOver = false;
  #allEnded: () => void = () => {};
  readonly #ended = new Promise<void>((resolve) => (this.#allEnded = resolve));

  constructor(pool: WorkPool, onCrash: (what: string, error: unknown) => void) {
    this.#pool = pool;
    this.#onCrash = onCrash;
  }

  /** Starts `session` (the conversation's turns) in the background. */
  start(conversation: ActiveConversation, session: () => Promise<void>): void {
    this.#open += 1;
    void session()
      .catch((error: unknown) => {
        this.#onCrash(`session ${conversation.id}`, error);
        this.#pool.fail(conversation);
      })
      .finally(() => {
        this.#open -= 1;
        if (this.#open === 0 && this.#arrivalsOver) this.#allEnded();
      });
  }

  /** No more sessions will start: resolves when every started one has ended. */
  ended(): Promise<void> {
    this.#arrivalsOver = true;
    if (this.#open === 0) this.#allEnded();
    return this.#ended;
  }
}
