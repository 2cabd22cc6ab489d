import { ActiveConversation } from './active-conversation.js';
import { describeLoadModel, loadModelFromOptions, runLoadModel, type ThinkTime } from './load/from-options.js';
import { StopController } from './stop.js';
import type { TurnContext } from './turn.js';
import type { EngineInput, EngineResult } from './types.js';
import { runWarmup } from './warmup.js';
import { WorkPool } from './work-pool.js';

const noThinkTime: ThinkTime = () => 0;

/** Formats a crash for the run's warnings: one line, the error's own message. */
function crashMessage(what: string, error: unknown): string {
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return `${what} died of a bug and was stopped (${detail}); the run carried on`;
}

/**
 * Runs the benchmark's load on one event loop: optional warmup, then the closed loop, under two deadlines
 * (--duration / a signal stop new turns; --benchmark-timeout-sec and the grace after a signal abort in-flight
 * requests). Every wait is bounded, so it always resolves, with every conversation accounted for.
 */
export async function runEngine(input: EngineInput): Promise<EngineResult> {
  const { options, observer = {} } = input;
  const stop = new StopController();
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
    observer.onWarning?.(message);
  };
  let crashedTasks = 0;
  const onCrash = (what: string, error: unknown): void => {
    crashedTasks += 1;
    warn(crashMessage(what, error));
  };
  let answerMismatches = 0;

  const timers: NodeJS.Timeout[] = [];
  const onStopping = (): void => observer.onPhase?.('stopping', String(stop.reason));
  stop.stopping.addEventListener('abort', onStopping, { once: true });
  timers.push(setTimeout(() => stop.abortInFlight('benchmark_timeout'), options.benchmarkTimeoutSec * 1000));
  const onSignal = (): void => {
    stop.stop('interrupted');
    timers.push(setTimeout(() => stop.abortInFlight('interrupted'), options.stopGraceSec * 1000));
  };
  if (input.signal?.aborted) onSignal();
  input.signal?.addEventListener('abort', onSignal, { once: true });

  const ctx: TurnContext = {
    options,
    client: input.client,
    model: input.model,
    counter: input.counter,
    stop,
    observer,
    runStartMs: performance.now(),
    onAnswerMismatch: () => {
      answerMismatches += 1;
    },
  };

  try {
    let conversations = input.conversations.map((c, i) => new ActiveConversation(c, i, options.maxTurns));
    const warmupOutcomes: Array<{ conversation: ActiveConversation; ok: boolean }> = [];
    let warmupRequestsSent = 0;
    if (options.warmupStep) {
      observer.onPhase?.('warmup');
      const warmup = await runWarmup(conversations, ctx, options.numClients, options.seed, (conversation, ok) => warmupOutcomes.push({ conversation, ok }), onCrash);
      conversations = warmup.remaining;
      warmupRequestsSent = warmup.sent;
    }

    const pool = new WorkPool(conversations, input.conversations.length, options.maxNumRequests);
    for (const { conversation, ok } of warmupOutcomes) {
      if (ok) pool.completedInWarmup(conversation);
      else pool.failedInWarmup();
    }

    const load = loadModelFromOptions(options, conversations.length, input.thinkTime ?? noThinkTime);
    if (load.type === 'fixed-clients' && conversations.length < options.numClients && !stop.stopping.aborted) {
      warn(`only ${conversations.length} conversations for ${options.numClients} clients: some clients have no work${options.earlyStop ? ' and early stop ends the run at once (use --no-early-stop)' : ''}`);
    }
    if (options.durationSec !== undefined) timers.push(setTimeout(() => stop.stop('duration'), options.durationSec * 1000));
    observer.onPhase?.('benchmark', describeLoadModel(load));
    ctx.runStartMs = performance.now(); // the measured phase starts here; open-loop arrivals are offsets from it
    await runLoadModel(load, ctx, pool, onCrash);
    const counts = pool.counts();
    stop.stop(pool.budgetSpent ? 'max_requests' : 'completed');
    // Early stop that found nothing left anywhere is simply completion.
    const everythingDone = counts.unfinished === 0 && counts.not_started === 0;
    const stopReason = stop.reason === 'out_of_work' && everythingDone ? 'completed' : (stop.reason ?? 'completed');
    if (counts.unfinished > 0) {
      warn(`${counts.unfinished} conversations were started but not finished when the run stopped (${stopReason}); they are counted as unfinished`);
    }
    if (answerMismatches > 0) warn(`--verify-output: ${answerMismatches} answers differ from the dataset's`);
    return {
      stopReason,
      loadModel: describeLoadModel(load),
      conversations: counts,
      finishedConversations: pool.finishedConversations,
      runStartMs: ctx.runStartMs,
      runEndMs: performance.now(),
      requestsSent: pool.requestsTaken,
      warmupRequestsSent,
      crashedTasks,
      answerMismatches,
      warnings,
    };
  } finally {
    for (const timer of timers) clearTimeout(timer);
    input.signal?.removeEventListener('abort', onSignal);
  }
}
