import type { LoadPlan } from '../../options/run-plan.js';
import { Rng } from '../../util/rng.js';
import type { ActiveConversation } from '../active-conversation.js';
import { ArrivalSchedule, describeArrivals, type ArrivalConfig } from '../arrivals.js';
import { ConcurrencyLimit } from '../concurrency-limit.js';
import { shareOf } from '../partition.js';
import { sleep } from '../sleep.js';
import { thinkTimeOf } from '../think-time.js';
import type { Executor, ExecutorContext, PartShare } from './executor.js';
import { describeCap, validateCap } from './queue-cap.js';
import { runSessionTurns, SessionsInFlight } from './session-turns.js';

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
  /** Requests waiting for a slot at most (more are dropped); undefined for no bound. */
  maxQueue?: number;
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

/**
 * This part's share of the plan's open loop. Each of N parts runs 1/N of the rate: N independent Poisson streams add
 * up to the whole (with gamma arrivals the sum is only approximately gamma; docs/SCALING.md says so).
 */
function configFor(load: LoadPlan, part: PartShare): OpenSessionsConfig {
  if (load.model.type !== 'open-sessions') throw new Error(`open-sessions made from a ${load.model.type} plan`);
  const model = load.model;
  const { ratePerSec, burstiness, rampUp } = model.arrivals;
  return {
    arrivals: { ratePerSec: ratePerSec / part.count, burstiness, rampUp: rampUp ? { startPerSec: rampUp.startPerSec / part.count, seconds: rampUp.seconds } : undefined },
    maxConcurrency: model.maxConcurrency === undefined ? undefined : Math.max(1, shareOf(model.maxConcurrency, part.index, part.count)),
    maxQueue: load.maxQueue === undefined ? undefined : shareOf(load.maxQueue, part.index, part.count),
    thinkTimeMs: thinkTimeOf(model.thinkTimeSec),
    seed: load.seed + part.index,
    sessionIdOffset: part.index,
    sessionIdStride: part.count,
  };
}

function validate(config: OpenSessionsConfig): string[] {
  const { ratePerSec, burstiness, rampUp } = config.arrivals;
  return [
    ...(ratePerSec > 0 && Number.isFinite(ratePerSec) ? [] : [`arrivals.ratePerSec: expected a finite number > 0, got ${ratePerSec}`]),
    ...(burstiness > 0 && Number.isFinite(burstiness) ? [] : [`arrivals.burstiness: expected a finite number > 0, got ${burstiness}`]),
    ...(rampUp === undefined || (rampUp.startPerSec >= 0 && rampUp.seconds > 0) ? [] : ['arrivals.rampUp: expected startPerSec >= 0 and seconds > 0']),
    ...validateCap(config),
  ];
}

/** One line describing the load model. */
function describe(config: OpenSessionsConfig): string {
  return `open-sessions: ${describeArrivals(config.arrivals)}${describeCap(config)}`;
}

/** Open-loop sessions as an executor (registry.ts). */
export const openSessions: Executor<OpenSessionsConfig> = { configFor, validate, describe, run: runOpenSessions };

/**
 * Runs the open loop until arrivals end (the dataset is used up, or a stop) and every session has ended.
 * Resolves, never rejects: a session that dies of a bug is handed to `onCrash` and its conversation counted failed.
 * `client_id` in the records is the session's number.
 */
async function runOpenSessions(config: OpenSessionsConfig, { turn: ctx, pool, onCrash }: ExecutorContext): Promise<void> {
  const stopping = ctx.stop.stopping;
  const limit = config.maxConcurrency === undefined ? undefined : new ConcurrencyLimit(config.maxConcurrency, config.maxQueue);
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
