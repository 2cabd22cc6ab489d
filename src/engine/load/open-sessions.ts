import { Rng } from '../../util/rng.js';
import type { ActiveConversation } from '../active-conversation.js';
import { ArrivalSchedule, describeArrivals, type ArrivalConfig } from '../arrivals.js';
import { ConcurrencyLimit } from '../concurrency-limit.js';
import { sleep } from '../sleep.js';
import type { TurnContext } from '../turn.js';
import type { WorkPool } from '../work-pool.js';
import type { CrashHandler } from './fixed-clients.js';
import { runSessionTurns, SessionsInFlight } from './session-turns.js';
import { counted } from '../../util/plural.js';

/**
 * `open-sessions`: users arrive on their own schedule (--session-rate, --burstiness, --ramp-up), each replaying one
 * conversation: turn 1 at arrival, then each next turn a think time after the previous answer. Nothing waits for
 * the server to free up before a session arrives, so queueing shows instead of hiding: every request records the
 * time it was meant to be sent, and --max-concurrency waits are recorded as queue time.
 */
export interface OpenSessionsConfig {
  arrivals: ArrivalConfig;
  /** Requests in flight at most; undefined for no cap. */
  maxConcurrency?: number;
  /** Pause before the conversation's next turn, ms (think time). `turn` is the 1-based turn about to be sent. */
  thinkTimeMs: (conversation: ActiveConversation, turn: number, rng: Rng) => number;
  seed: number;
  /** Session numbers are offset + local number * stride, so parts of one run number their sessions apart. */
  sessionIdOffset?: number;
  sessionIdStride?: number;
}

/** The run's arrival schedule: deterministic for the config's seed (tests recompute it to check the intended send times). */
export function arrivalScheduleFor(config: Pick<OpenSessionsConfig, 'arrivals' | 'seed'>): ArrivalSchedule {
  return new ArrivalSchedule(config.arrivals, Rng.derive(config.seed, 0x6172));
}

/** One line describing the load model. */
export function describeOpenSessions(config: OpenSessionsConfig): string {
  const cap = config.maxConcurrency === undefined ? '' : `, at most ${counted(config.maxConcurrency, 'request')} in flight`;
  return `open-sessions: ${describeArrivals(config.arrivals)}${cap}`;
}

/**
 * Runs the open loop until arrivals end (the dataset is used up, or a stop) and every session has ended.
 * Resolves, never rejects: a session that dies of a bug is handed to `onCrash` and its conversation counted failed.
 * `client_id` in the records is the session's number.
 */
export async function runOpenSessions(config: OpenSessionsConfig, ctx: TurnContext, pool: WorkPool, onCrash: CrashHandler): Promise<void> {
  const stopping = ctx.stop.stopping;
  const limit = config.maxConcurrency === undefined ? undefined : new ConcurrencyLimit(config.maxConcurrency);
  const schedule = arrivalScheduleFor(config);
  const startMs = ctx.loadStartMs;
  const sessions = new SessionsInFlight(pool, onCrash);

  // Each next turn comes a think time after the previous answer.
  const afterThinking = (conversation: ActiveConversation, rng: Rng): number => performance.now() + Math.max(0, config.thinkTimeMs(conversation, conversation.nextTurn, rng));
  const runSession = (conversation: ActiveConversation, session: number, arrivedAtMs: number): Promise<void> =>
    runSessionTurns(ctx, pool, limit, conversation, session, Rng.derive(config.seed, session + 1), arrivedAtMs, afterThinking);

  for (let local = 0; !stopping.aborted; local++) {
    const session = (config.sessionIdOffset ?? 0) + local * (config.sessionIdStride ?? 1);
    const arrivalMs = startMs + schedule.next();
    if (!Number.isFinite(arrivalMs) || !(await sleep(arrivalMs - performance.now(), stopping))) break;
    const conversation = pool.take();
    if (conversation === undefined) break; // every conversation has arrived
    sessions.start(conversation, () => runSession(conversation, session, arrivalMs));
  }
  await sessions.ended();
}
