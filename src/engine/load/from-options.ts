import { isOpenLoop, type RunOptions } from '../../options/run-options.js';
import type { ActiveConversation } from '../active-conversation.js';
import type { TurnContext } from '../turn.js';
import type { WorkPool } from '../work-pool.js';
import { describeFixedClients, runFixedClients, type CrashHandler, type FixedClientsConfig } from './fixed-clients.js';
import { describeOpenSessions, runOpenSessions, type OpenSessionsConfig } from './open-sessions.js';
import type { Rng } from '../../synth/rng.js';
import { offsetOf, shareOf } from '../partition.js';

/** The load models, by name. */
export type LoadModel = { type: 'fixed-clients'; config: FixedClientsConfig } | { type: 'open-sessions'; config: OpenSessionsConfig };

/** Think time in ms before a conversation's next turn. */
export type ThinkTime = (conversation: ActiveConversation, turn: number, rng: Rng) => number;

/**
 * Turns the run flags into one load model, as k6 turns its short flags into a scenario: --session-rate or
 * --ramp-up select open-loop sessions; otherwise the reference's closed loop (-p/-k/--request-rate).
 */
export function loadModelFromOptions(options: RunOptions, conversations: number, thinkTime: ThinkTime, part?: { index: number; count: number }): LoadModel {
  const index = part?.index ?? 0;
  const count = part?.count ?? 1;
  if (isOpenLoop(options)) {
    const ramp = options.rampUp?.split(':').slice(1).map(Number);
    // Each of N parts runs 1/N of the rate: N independent Poisson streams add up to the whole (with gamma arrivals
    // the sum is only approximately gamma; docs/SCALING.md says so).
    return {
      type: 'open-sessions',
      config: {
        arrivals: {
          ratePerSec: (ramp ? ramp[1]! : options.sessionRate!) / count,
          burstiness: options.burstiness,
          rampUp: ramp ? { startPerSec: ramp[0]! / count, seconds: ramp[2]! } : undefined,
        },
        maxConcurrency: options.maxConcurrency === undefined ? undefined : Math.max(1, shareOf(options.maxConcurrency, index, count)),
        thinkTimeMs: thinkTime,
        seed: options.seed + index,
        sessionIdOffset: index,
        sessionIdStride: count,
      },
    };
  }
  const numClients = shareOf(options.numClients, index, count);
  // -k split like -p, and never more than this part's conversations (but at least one per client).
  const active = Math.max(numClients, Math.min(shareOf(options.maxActiveConversations ?? options.numClients, index, count), conversations));
  return {
    type: 'fixed-clients',
    config: {
      numClients,
      maxActiveConversations: active,
      sampling: options.conversationSampling,
      requestRate: options.requestRate,
      earlyStop: options.earlyStop,
      seed: options.seed,
      clientIdOffset: offsetOf(options.numClients, index, count),
    },
  };
}

/** One line describing the load model. */
export function describeLoadModel(model: LoadModel): string {
  return model.type === 'open-sessions' ? describeOpenSessions(model.config) : describeFixedClients(model.config);
}

/** Runs the load model to its end. Never rejects. */
export function runLoadModel(model: LoadModel, ctx: TurnContext, pool: WorkPool, onCrash: CrashHandler): Promise<void> {
  return model.type === 'open-sessions' ? runOpenSessions(model.config, ctx, pool, onCrash) : runFixedClients(model.config, ctx, pool, onCrash);
}
