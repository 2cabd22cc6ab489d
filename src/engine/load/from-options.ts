import type { LoadPlan } from '../../options/run-plan.js';
import type { TurnContext } from '../turn.js';
import type { WorkPool } from '../work-pool.js';
import { describeFixedClients, runFixedClients, type CrashHandler, type FixedClientsConfig } from './fixed-clients.js';
import { describeFixedSchedule, runFixedSchedule, type FixedScheduleConfig } from './fixed-schedule.js';
import { describeOpenSessions, runOpenSessions, type OpenSessionsConfig } from './open-sessions.js';
import { offsetOf, shareOf } from '../partition.js';
import { thinkTimeOf } from '../think-time.js';

/** The load models, by name. */
export type LoadModel =
  | { type: 'fixed-clients'; config: FixedClientsConfig }
  | { type: 'open-sessions'; config: OpenSessionsConfig }
  | { type: 'fixed-schedule'; config: FixedScheduleConfig };

/**
 * The load model one part of the run runs (a worker thread or a shard; the whole run when there is no `part`): the
 * plan's load model, as k6 turns its short flags into a scenario, with this part's share of clients, active
 * conversations, session rate and concurrency cap. A trace (`traced`) is replayed at its timestamps whatever the
 * closed-loop flags say: its schedule is the load.
 */
export function loadModelFor(load: LoadPlan, conversations: number, part?: { index: number; count: number }, traced = false): LoadModel {
  const index = part?.index ?? 0;
  const count = part?.count ?? 1;
  const model = load.model;
  if (traced) {
    const cap = load.trace.maxConcurrency;
    return {
      type: 'fixed-schedule',
      config: {
        speed: load.trace.speed,
        maxConcurrency: cap === undefined ? undefined : Math.max(1, shareOf(cap, index, count)),
        seed: load.seed + index,
        sessionIdOffset: index,
        sessionIdStride: count,
      },
    };
  }
  if (model.type === 'open-sessions') {
    const { ratePerSec, burstiness, rampUp } = model.arrivals;
    // Each of N parts runs 1/N of the rate: N independent Poisson streams add up to the whole (with gamma arrivals
    // the sum is only approximately gamma; docs/SCALING.md says so).
    return {
      type: 'open-sessions',
      config: {
        arrivals: { ratePerSec: ratePerSec / count, burstiness, rampUp: rampUp ? { startPerSec: rampUp.startPerSec / count, seconds: rampUp.seconds } : undefined },
        maxConcurrency: model.maxConcurrency === undefined ? undefined : Math.max(1, shareOf(model.maxConcurrency, index, count)),
        thinkTimeMs: thinkTimeOf(model.thinkTimeSec),
        seed: load.seed + index,
        sessionIdOffset: index,
        sessionIdStride: count,
      },
    };
  }
  const numClients = shareOf(model.numClients, index, count);
  // -k split like -p, and never more than this part's conversations (but at least one per client).
  const active = Math.max(numClients, Math.min(shareOf(model.maxActiveConversations, index, count), conversations));
  return {
    type: 'fixed-clients',
    config: {
      numClients,
      maxActiveConversations: active,
      sampling: model.sampling,
      requestRate: model.requestRatePerSec,
      earlyStop: model.earlyStop,
      untilBudget: load.maxNumRequests !== undefined,
      seed: load.seed,
      clientIdOffset: offsetOf(model.numClients, index, count),
    },
  };
}

/** One line describing the load model. */
export function describeLoadModel(model: LoadModel): string {
  if (model.type === 'fixed-schedule') return describeFixedSchedule(model.config);
  return model.type === 'open-sessions' ? describeOpenSessions(model.config) : describeFixedClients(model.config);
}

/** Runs the load model to its end. Never rejects. */
export function runLoadModel(model: LoadModel, ctx: TurnContext, pool: WorkPool, onCrash: CrashHandler): Promise<void> {
  if (model.type === 'fixed-schedule') return runFixedSchedule(model.config, ctx, pool, onCrash);
  return model.type === 'open-sessions' ? runOpenSessions(model.config, ctx, pool, onCrash) : runFixedClients(model.config, ctx, pool, onCrash);
}
