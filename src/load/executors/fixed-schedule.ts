import type { LoadPlan } from '../../options/run-plan.js';
import { Rng } from '../../util/rng.js';
import type { ActiveConversation } from '../active-conversation.js';
import { ConcurrencyLimit } from '../concurrency-limit.js';
import { shareOf } from '../partition.js';
import { sleep } from '../sleep.js';
import type { Executor, ExecutorContext, PartShare } from './executor.js';
import { describeCap, validateCap } from './queue-cap.js';
import { runSessionTurns, SessionsInFlight } from './session-turns.js';

/**
 * `fixed-schedule`: a production trace replayed at its timestamps (Mooncake, Bailian). An open loop: each session
 * starts at its first request's timestamp whatever the server is doing; each later request goes at its own timestamp
 * (Bailian) or its `delay` after the previous answer (Mooncake sessions), never before the previous answer of its
 * session. Time is divided by --trace-speed. Every request records its scheduled time, so lag is measured as in
 * the other open loop, and --max-concurrency waits are recorded as queue time.
 */
export interface FixedScheduleConfig {
  /** --trace-speed: trace time is divided by it (2 = twice as fast). */
  speed: number;
  /** Requests in flight at most; undefined for no cap. */
  maxConcurrency?: number;
  /** Requests waiting for a slot at most (more are dropped); undefined for no bound. */
  maxQueue?: number;
  seed: number;
  /** Session numbers are offset + local number * stride, so parts of one run number their sessions apart. */
  sessionIdOffset?: number;
  sessionIdStride?: number;
}

/** This part's share of the trace's replay: the cap split between parts, sessions numbered apart. */
function configFor(load: LoadPlan, part: PartShare): FixedScheduleConfig {
  const { maxConcurrency: cap, speed } = load.trace;
  return {
    speed,
    maxConcurrency: cap === undefined ? undefined : Math.max(1, shareOf(cap, part.index, part.count)),
    maxQueue: load.maxQueue === undefined ? undefined : shareOf(load.maxQueue, part.index, part.count),
    seed: load.seed + part.index,
    sessionIdOffset: part.index,
    sessionIdStride: part.count,
  };
}

function validate(config: FixedScheduleConfig): string[] {
  return [...(config.speed > 0 && Number.isFinite(config.speed) ? [] : [`speed: expected a finite number > 0, got ${config.speed}`]), ...validateCap(config)];
}

/** One line describing the load model. */
function describe(config: FixedScheduleConfig): string {
  return `fixed-schedule: the trace's timestamps${config.speed === 1 ? '' : ` at ${config.speed}x speed`}${describeCap(config)}`;
}

/** A trace's replay as an executor (registry.ts). */
export const fixedSchedule: Executor<FixedScheduleConfig> = { configFor, validate, describe, run: runFixedSchedule };

/** When the conversation's next turn is due (performance.now() ms): its timestamp, or its delay after `previousEndMs`. */
function dueAt(conversation: ActiveConversation, config: FixedScheduleConfig, startMs: number, previousEndMs: number): number {
  const turn = conversation.traceTurn;
  if (turn?.atMs !== undefined) return Math.max(startMs + turn.atMs / config.speed, previousEndMs);
  return previousEndMs + (turn?.delayMs ?? 0) / config.speed;
}

/**
 * Replays the trace until every session has ended (or a stop). Sessions are taken in the pool's order, which is the
 * order of their first request. Resolves, never rejects: a session that dies of a bug goes to `onCrash`.
 */
async function runFixedSchedule(config: FixedScheduleConfig, { turn: ctx, pool, onCrash }: ExecutorContext): Promise<void> {
  const stopping = ctx.stop.stopping;
  const limit = config.maxConcurrency === undefined ? undefined : new ConcurrencyLimit(config.maxConcurrency, config.maxQueue);
  const startMs = ctx.loadStartMs;
  const sessions = new SessionsInFlight(pool, onCrash);

  const due = (conversation: ActiveConversation): number => dueAt(conversation, config, startMs, performance.now());
  const runSession = (conversation: ActiveConversation, session: number, firstAtMs: number): Promise<void> =>
    runSessionTurns(ctx, pool, limit, conversation, session, Rng.derive(config.seed, session + 1), firstAtMs, due);

  for (let local = 0; !stopping.aborted; local++) {
    const conversation = pool.take();
    if (conversation === undefined) break;
    const session = (config.sessionIdOffset ?? 0) + local * (config.sessionIdStride ?? 1);
    const atMs = startMs + (conversation.traceTurn?.atMs ?? 0) / config.speed;
    // Taken but never started, it counts as not started.
    if (!(await sleep(atMs - performance.now(), stopping))) break;
    sessions.start(conversation, () => runSession(conversation, session, atMs));
  }
  await sessions.ended();
}
