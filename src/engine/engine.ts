import { setLongTimeout, type LongTimer } from '../util/long-timer.js';
import { TracePrefixCache } from '../prefix-cache/trace-blocks.js';
import { HashBlockText } from '../synth/hash-blocks.js';
import { ActiveConversation } from './active-conversation.js';
import { ExpectedCache } from '../cache-model/expected-cache.js';
import { describeLoadModel, loadModelFor, runLoadModel } from './load/from-options.js';
import { ownsConversation, RequestBudget, shareOf } from './partition.js';
import { sleep } from './sleep.js';
import { StopController, type StopReason } from './stop.js';
import type { TurnContext } from './turn.js';
import type { ConversationCounts, EngineInput, EngineResult } from './types.js';
import { runWarmup } from './warmup.js';
import { WorkPool } from './work-pool.js';
import { counted, wasWere } from '../util/plural.js';

/** The run's stop reason: an early stop that found nothing left anywhere is simply completion. */
export function finalStopReason(reason: StopReason | undefined, counts: ConversationCounts): StopReason {
  const everythingDone = counts.unfinished === 0 && counts.not_started === 0;
  return reason === 'out_of_work' && everythingDone ? 'completed' : (reason ?? 'completed');
}

/** The warning for conversations a stop left unfinished, if any. */
export function unfinishedWarning(counts: ConversationCounts, reason: StopReason): string | undefined {
  if (counts.unfinished === 0) return undefined;
  const n = counts.unfinished;
  return `${counted(n, 'conversation')} ${wasWere(n)} started but not finished when the run stopped (${reason}); ${n === 1 ? 'it is' : 'they are'} counted as unfinished`;
}

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
  const { load, deadlines, observer = {}, part } = input;
  const stop = part?.stop ?? new StopController();
  const budget = part?.budget ?? new RequestBudget(load.maxNumRequests);
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

  // Any length (--benchmark-timeout-sec, --duration): past setTimeout's 24.8 days a chain of timers (util/long-timer.ts).
  const timers: LongTimer[] = [];
  const onStopping = (): void => observer.onPhase?.('stopping', String(stop.reason));
  stop.stopping.addEventListener('abort', onStopping, { once: true });
  timers.push(setLongTimeout(() => stop.abortInFlight('benchmark_timeout'), deadlines.benchmarkMs));
  const unfollow = stop.followSignal(input.signal, deadlines.stopGraceMs);
  const unfollowStop = stop.followStopSignal(input.stopSignal);

  // A trace's prompts are made from its hash ids under the run's tokenizer; its expected cache is counted on them.
  const traced = input.conversations.some((c) => c.trace !== undefined);
  const prompts = traced ? new HashBlockText(input.counter.tokenizer, load.seed) : undefined;
  if (prompts !== undefined && !prompts.exact) {
    warn(`the tokenizer ${input.counter.tokenizer.name} merges the trace's prompt words: hash blocks are not exactly --trace-block-size tokens, so prefix sharing is approximate`);
  }
  const ctx: TurnContext = {
    request: input.request,
    client: input.client,
    model: input.model,
    counter: input.counter,
    expectedCache: new ExpectedCache(input.counter, input.expectedCache ?? { blockSize: 16 }, stop.abort),
    stop,
    // A turn's warnings are the run's: kept in its result as well as told to the observer.
    observer: { ...observer, onWarning: warn },
    runStartMs: performance.now(),
    loadStartMs: performance.now(),
    onAnswerMismatch: () => {
      answerMismatches += 1;
    },
    onCrash,
    traceCache: traced ? new TracePrefixCache() : undefined,
  };

  try {
    // Parts of one run (worker threads, shards with --start-at) start together: wait for the common start, and time
    // every record from it so the parts' records line up.
    if (part?.startEpochMs !== undefined) {
      await sleep(part.startEpochMs - (performance.timeOrigin + performance.now()), stop.stopping);
      ctx.runStartMs = part.startEpochMs - performance.timeOrigin;
    }
    let conversations: ActiveConversation[] = [];
    input.conversations.forEach((c, i) => {
      const index = input.datasetIndices?.[i] ?? i;
      if (input.datasetIndices === undefined && part !== undefined && !ownsConversation(i, part.index, part.count)) return;
      const active = new ActiveConversation(c, index, load.maxTurns, { prompts });
      const resume = input.resumePoints?.get(index);
      if (resume !== undefined) active.resumeAt(resume.turnsDone, resume.lastInputTokens, resume.lastOutputTokens);
      conversations.push(active);
    });
    const owned = conversations.length;
    const clientsHere = part === undefined ? load.clients : shareOf(load.clients, part.index, part.count);
    const warmupOutcomes: Array<{ conversation: ActiveConversation; ok: boolean }> = [];
    let warmupRequestsSent = 0;
    if (load.warmupStep) {
      observer.onPhase?.('warmup');
      const warmup = await runWarmup(conversations, ctx, Math.max(1, clientsHere), load.seed, (conversation, ok) => warmupOutcomes.push({ conversation, ok }), onCrash);
      conversations = warmup.remaining;
      warmupRequestsSent = warmup.sent;
    }

    const pool = new WorkPool(conversations, owned, budget, { keepFinished: input.keepFinishedConversations, onEnd: (outcome) => observer.onConversationEnd?.(outcome) });
    // Sub-agents' requests count in -n like the sessions' (warmup ones, before this, do not).
    ctx.takeRequest = () => pool.takeRequest();
    // From here the pool alone holds the conversations, and lets each go once it ends: holding this list too would
    // keep every finished history (and its answers) for the whole run.
    const remaining = conversations.length;
    conversations = [];
    for (const { conversation, ok } of warmupOutcomes) {
      if (ok) pool.completedInWarmup(conversation);
      else pool.failedInWarmup();
    }
    warmupOutcomes.length = 0;

    const loadModel = loadModelFor(load, remaining, part, traced);
    if (loadModel.type === 'fixed-clients' && remaining < loadModel.config.numClients && !stop.stopping.aborted) {
      const earlyStop = loadModel.config.earlyStop && loadModel.config.untilBudget !== true ? ' and early stop ends the run at once (use --no-early-stop)' : '';
      warn(`only ${counted(remaining, 'conversation')} for ${counted(loadModel.config.numClients, 'client')}: some clients have no work${earlyStop}`);
    }
    const durationMs = deadlines.durationMs;
    if (durationMs !== undefined) timers.push(setLongTimeout(() => stop.stop('duration'), durationMs));
    observer.onPhase?.('benchmark', describeLoadModel(loadModel));
    if (part?.startEpochMs === undefined) ctx.runStartMs = performance.now(); // the measured phase starts here
    ctx.loadStartMs = load.warmupStep ? performance.now() : ctx.runStartMs;
    await runLoadModel(loadModel, ctx, pool, onCrash);
    const counts = pool.counts();
    stop.stop(pool.budgetSpent ? 'max_requests' : 'completed');
    const stopReason = finalStopReason(stop.reason, counts);
    // A part of a larger run leaves this warning to its coordinator, which sees every part's counts.
    if (part?.coordinated !== true) {
      const unfinished = unfinishedWarning(counts, stopReason);
      if (unfinished !== undefined) warn(unfinished);
    }
    if (answerMismatches > 0) warn(`--verify-output: ${counted(answerMismatches, 'answer')} ${answerMismatches === 1 ? 'differs' : 'differ'} from the dataset's`);
    return {
      stopReason,
      loadModel: describeLoadModel(loadModel),
      conversations: counts,
      finishedConversations: pool.finishedConversations,
      runStartMs: ctx.runStartMs,
      runEndMs: performance.now(),
      requestsSent: budget.taken,
      warmupRequestsSent,
      crashedTasks,
      answerMismatches,
      warnings,
    };
  } finally {
    for (const timer of timers) timer.clear();
    await ctx.expectedCache?.close();
    unfollow();
    unfollowStop();
  }
}
