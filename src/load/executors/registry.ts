import { ConfigError } from '../../errors/index.js';
import type { LoadPlan } from '../../options/run-plan.js';
import type { Executor, ExecutorContext, PartShare } from './executor.js';
import { fixedClients } from './fixed-clients.js';
import { fixedSchedule } from './fixed-schedule.js';
import { openSessions } from './open-sessions.js';

/** The load models by name: the one place a type meets its executor. */
const EXECUTORS = {
  'fixed-clients': fixedClients,
  'open-sessions': openSessions,
  'fixed-schedule': fixedSchedule,
} as const;

type ExecutorType = keyof typeof EXECUTORS;
type ConfigOf<T extends ExecutorType> = (typeof EXECUTORS)[T] extends Executor<infer C> ? C : never;

/** A load model: an executor's type and its config. */
export type LoadModel = { [T in ExecutorType]: { type: T; config: ConfigOf<T> } }[ExecutorType];

/** The executor of a load model, typed for its config (the map above is the only dispatch). */
function executorOf(model: LoadModel): Executor<LoadModel['config']> {
  return EXECUTORS[model.type] as Executor<LoadModel['config']>;
}

/**
 * The load model one part of the run runs (a worker thread or a shard; the whole run when there is no `part`): the
 * plan's load model, as k6 turns its short flags into a scenario, with this part's share. A trace (`traced`) is
 * replayed at its timestamps whatever the closed-loop flags say: its schedule is the load. Throws a ConfigError
 * naming every problem of the config (a library caller's plan may hold what the option checks would refuse).
 */
export function loadModelFor(load: LoadPlan, conversations: number, part: PartShare = { index: 0, count: 1 }, traced = false): LoadModel {
  const type: ExecutorType = traced ? 'fixed-schedule' : load.model.type;
  const model = { type, config: EXECUTORS[type].configFor(load, part, conversations) } as LoadModel;
  const problems = executorOf(model).validate(model.config);
  if (problems.length > 0) throw new ConfigError(`invalid load model (${type}): ${problems.join('; ')}`);
  return model;
}

/** One line describing the load model. */
export function describeLoadModel(model: LoadModel): string {
  return executorOf(model).describe(model.config);
}

/** Warnings the load model has before it starts. */
export function loadModelWarnings(model: LoadModel, conversations: number): string[] {
  return executorOf(model).startWarnings?.(model.config, conversations) ?? [];
}

/** Runs the load model to its end. Never rejects. */
export function runLoadModel(model: LoadModel, ctx: ExecutorContext): Promise<void> {
  return executorOf(model).run(model.config, ctx);
}
