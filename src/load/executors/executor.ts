import type { LoadPlan } from '../../options/run-plan.js';
import type { TurnContext } from '../turn.js';
import type { WorkPool } from '../work-pool.js';

/** Called when a client or session task dies of a bug: the run records it and carries on without that task. */
export type CrashHandler = (what: string, error: unknown) => void;

/** What an executor runs with: the turn context, the shared pool of conversations and -n budget, the supervisor. */
export interface ExecutorContext {
  turn: TurnContext;
  pool: WorkPool;
  onCrash: CrashHandler;
}

/** The part of the run an executor's config is made for: a worker thread or shard (index of count), else the whole. */
export interface PartShare {
  index: number;
  count: number;
}

/**
 * A load model as an executor (as k6's lib/executor): its config is declared once, in its own file, beside
 * what makes it from the plan, checks it, says it and runs it. The registry (registry.ts) maps a type to it; nothing
 * else switches on the type.
 */
export interface Executor<Config> {
  /** This part's config from the run's load plan (`conversations`: how many this part holds after warmup). */
  configFor(load: LoadPlan, part: PartShare, conversations: number): Config;
  /** Every problem with the config, one line each; empty when it can run as given. */
  validate(config: Config): string[];
  /** One line for the start line and results.json's `load_model`. */
  describe(config: Config): string;
  /** Warnings worth saying before the load starts (e.g. fewer conversations than clients). */
  startWarnings?(config: Config, conversations: number): string[];
  /** Runs the load to its end. Resolves, never rejects: a task that dies of a bug goes to `ctx.onCrash`. */
  run(config: Config, ctx: ExecutorContext): Promise<void>;
}
