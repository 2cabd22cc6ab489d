import { ActiveConversation } from './active-conversation.js';
import { sleep } from './sleep.js';
import type { LoadObserver } from './types.js';
import type { StopController } from './stop.js';

/** What fork/join needs of the turn context (turn.ts's TurnContext has it). */
export interface ForkContext {
  stop: StopController;
  observer: LoadObserver;
  onCrash?: (what: string, error: unknown) => void;
  /** performance.now() at which the load started: a trace sub-agent's turn goes at its `atMs` from it, divided by `traceSpeed`. */
  loadStartMs?: number;
  /** --trace-speed. */
  traceSpeed?: number;
}

/** ms to wait before a child's next step: a trace turn's time (never before the previous answer), else its think time. */
function waitBefore(ctx: ForkContext, child: ActiveConversation): number {
  const atMs = child.traceTurn?.atMs;
  if (atMs !== undefined && ctx.loadStartMs !== undefined) return ctx.loadStartMs + atMs / (ctx.traceSpeed ?? 1) - performance.now();
  if (!child.started) return 0;
  return (child.conversation.turns?.[child.nextTurn - 1]?.thinkTimeSec ?? 0) * 1000;
}

/**
 * One step of a child: turn.ts's takeTurn (one request from the -n budget, the turn, its record; it calls back here for
 * nested forks), given as a function so that this file does not import turn.ts.
 */
export type StepFn = (conversation: ActiveConversation) => Promise<'more' | 'done' | 'failed' | 'budget_spent'>;

/**
 * Fork/join of sub-agents (docs/DATASETS.md, "Sub-agent forks"). After a step whose answer the dataset forks at, the
 * parent's children start together, each with the parent's history up to that request's prompt (so they share its
 * prefix), and run concurrently, step after step, honouring their `think_time_sec` (a trace sub-agent's turn: its
 * time on the trace's clock, never before its previous answer); the parent's next step waits
 * until every child has ended (answered its last step, failed, or the run stopped). Each child request takes one
 * request from the -n budget; when the budget is spent the run stops as it does for a top-level request.
 * Returns the records' count (children's records go to the observer as they end).
 */
export async function joinForks(ctx: ForkContext, parent: ActiveConversation, step: StepFn): Promise<number> {
  const forks = parent.takeForks();
  if (forks === undefined) return 0;
  const stopping = ctx.stop.stopping;
  let sent = 0;
  const runChild = async (child: ActiveConversation): Promise<void> => {
    while (!child.done && !stopping.aborted) {
      const waitMs = waitBefore(ctx, child);
      if (waitMs > 0 && !(await sleep(waitMs, stopping))) return;
      const outcome = await step(child);
      if (outcome === 'budget_spent') return;
      sent += 1;
      if (outcome === 'failed') return;
    }
  };
  const children = forks.children.map(
    (c) => new ActiveConversation(c, parent.index, undefined, { fork: { parentId: parent.id, prefix: forks.prefix, prefixTokens: forks.prefixTokens }, prompts: parent.prompts }),
  );
  // A child that dies of a bug ends itself, not its siblings or the parent (the supervisor records it).
  await Promise.all(children.map((child) => runChild(child).catch((error: unknown) => ctx.onCrash?.(`sub-agent ${child.id} of ${parent.id}`, error))));
  return sent;
}
