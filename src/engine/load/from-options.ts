import type { RunOptions } from '../../options/run-options.js';
import type { ActiveConversation } from '../active-conversation.js';
import type { TurnContext } from '../turn.js';
import type { WorkPool } from '../work-pool.js';
import { describeFixedClients, runFixedClients, type CrashHandler, type FixedClientsConfig } from './fixed-clients.js';
import { describeOpenSessions, runOpenSessions, type OpenSessionsConfig } from './open-sessions.js';
import type { Rng } from '../../synth/rng.js';

/** The load models, by name. */
export type LoadModel = { type: 'fixed-clients'; config: FixedClientsConfig } | { type: 'open-sessions'; config: OpenSessionsConfig };

/** Think time in ms before a conversation's next turn. */
export type ThinkTime = (conversation: ActiveConversation, turn: number, rng: Rng) => number;

/**
 * Turns the run flags into one load model, as k6 turns its short flags into a scenario: --session-rate or
 * --ramp-up select open-loop sessions; otherwise the reference's closed loop (-p/-k/--request-rate).
 */
export function loadModelFromOptions(options: RunOptions, conversations: number, thinkTime: ThinkTime): LoadModel {
  if (options.sessionRate !== undefined || options.rampUp !== undefined) {
    const ramp = options.rampUp?.split(':').slice(1).map(Number);
    return {
      type: 'open-sessions',
      config: {
        arrivals: {
          ratePerSec: ramp ? ramp[1]! : options.sessionRate!,
          burstiness: options.burstiness,
          rampUp: ramp ? { startPerSec: ramp[0]!, seconds: ramp[2]! } : undefined,
        },
        maxConcurrency: options.maxConcurrency,
        thinkTimeMs: thinkTime,
        seed: options.seed,
      },
    };
  }
  return {
    type: 'fixed-clients',
    config: {
      numClients: options.numClients,
      maxActiveConversations: Math.min(options.maxActiveConversations ?? options.numClients, Math.max(conversations, options.numClients)),
      sampling: options.conversationSampling,
      requestRate: options.requestRate,
      earlyStop: options.earlyStop,
      seed: options.seed,
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
