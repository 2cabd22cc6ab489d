import { setLongTimeout, type LongTimer } from '../util/long-timer.js';
import { TracePrefixCache } from '../prefix-cache/trace-blocks.js';
import { HashBlockText } from '../synth/hash-blocks.js';
import { ActiveConversation } from './active-conversation.js';
import { ExpectedCache } from '../cache-model/expected-cache.js';
import { RemoteIndexDriver } from '../cache-model/index-transport.js';
import type { CrashHandler } from './executors/executor.js';
import { describeLoadModel, loadModelFor, loadModelWarnings, runLoadModel, type LoadModel } from './executors/registry.js';
import { ownsConversation, RequestBudget, shareOf } from './partition.js';
import { sleep } from './sleep.js';
import { StopController, type StopReason } from './stop.js';
import type { TurnContext } from './turn.js';
import type { ConversationCounts, LoadInput, LoadObserver, LoadResult } from './types.js';
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

/** The warning for requests a full --max-queue dropped, if any (each ended its conversation). */
export function droppedWarning(counts: ConversationCounts): string | undefined {
  const n = counts.dropped;
  if (n === 0) return undefined;
  return `${counted(n, 'request')} ${wasWere(n)} dropped: ${n === 1 ? 'it' : 'each'} found the --max-queue full, and ${n === 1 ? 'its conversation' : 'their conversations'} ended there (dropped_requests)`;
}

/** The end-of-run warnings of the conversation counts: unfinished conversations and dropped requests. */
export function countWarnings(counts: ConversationCounts, reason: StopReason): string[] {
  return [unfinishedWarning(counts, reason), droppedWarning(counts)].filter((w): w is string => w !== undefined);
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
export async function runLoad(input: LoadInput): Promise<LoadResult> {
  const { load, deadlines, observer = {}, part } = input;
  const stop = part?.stop ?? new StopController();
  const budget = part?.budget ?? new RequestBudget(load.maxNumRequests);
  const tally = startTally(observer);
  const armed = startDeadlines(input, stop, observer);
  // A trace's prompts are made from its hash ids under the run's tokenizer; its expected cache is counted on them.
  const traced = input.conversations.some((c) => c.trace !== undefined);
  const prompts = traced ? tracePrompts(input, tally.warn) : undefined;
  const ctx = turnContext(input, stop, tally, traced);
  const run: LoadRun = { input, observer, stop, budget, ctx, tally };

  try {
    // A step that may wait is awaited only when it runs: with no common start and no warmup, runLoad sets up and
    // starts the load before it returns its promise.
    if (part?.startEpochMs !== undefined) await waitForCommonStart(part.startEpochMs, stop, ctx);
    let conversations = prepareConversations(input, prompts);
    const owned = conversations.length;
    const warmupOutcomes: WarmupOutcome[] = [];
    let warmupRequestsSent = 0;
    if (load.warmupStep) {
      const warmup = await warmUp(run, conversations, warmupOutcomes);
      conversations = warmup.remaining;
      warmupRequestsSent = warmup.sent;
    }
    const pool = startPool(run, conversations, owned);
    // From here the pool alone holds the conversations, and lets each go once it ends: holding this list too would
    // keep every finished history (and its answers) for the whole run.
    const remaining = conversations.length;
    conversations = [];
    countWarmupOutcomes(pool, warmupOutcomes);
    warmupOutcomes.length = 0;

    const loadModel = loadModelFor(load, remaining, part, traced);
    if (!stop.stopping.aborted) for (const warning of loadModelWarnings(loadModel, remaining)) tally.warn(warning);
    const durationMs = deadlines.durationMs;
    if (durationMs !== undefined) armed.timers.push(setLongTimeout(() => stop.stop('duration'), durationMs));
    observer.onPhase?.('benchmark', describeLoadModel(loadModel));
    if (part?.startEpochMs === undefined) ctx.runStartMs = performance.now(); // the measured phase starts here
    ctx.loadStartMs = load.warmupStep ? performance.now() : ctx.runStartMs;
    await runLoadModel(loadModel, { turn: ctx, pool, onCrash: tally.onCrash });
    return finishResult(run, pool, loadModel, warmupRequestsSent);
  } finally {
    await releaseDeadlines(armed, ctx);
  }
}

/** What runLoad's steps share: its input and observer, this part's stop and -n budget, the turns' context, the tally. */
interface LoadRun {
  readonly input: LoadInput;
  readonly observer: LoadObserver;
  readonly stop: StopController;
  readonly budget: RequestBudget;
  readonly ctx: TurnContext;
  readonly tally: RunTally;
}

/** The run's warnings (kept in its result and told to the observer), its crashed tasks and its answer mismatches. */
interface RunTally {
  readonly warnings: string[];
  crashedTasks: number;
  answerMismatches: number;
  readonly warn: (message: string) => void;
  readonly onCrash: CrashHandler;
}

/** An empty tally whose warnings, crashes included, also go to the observer. */
function startTally(observer: LoadObserver): RunTally {
  const tally: RunTally = {
    warnings: [],
    crashedTasks: 0,
    answerMismatches: 0,
    warn: (message) => {
      tally.warnings.push(message);
      observer.onWarning?.(message);
    },
    onCrash: (what, error) => {
      tally.crashedTasks += 1;
      tally.warn(crashMessage(what, error));
    },
  };
  return tally;
}

/** What startDeadlines armed: the timers (--duration's joins them later) and the signals followed. */
interface ArmedDeadlines {
  readonly timers: LongTimer[];
  readonly unfollow: () => void;
  readonly unfollowStop: () => void;
}

/**
 * Arms what holds from the start: the observer hears of the stop, --benchmark-timeout-sec aborts in-flight requests,
 * and the caller's signal and stop signal stop the run. --duration waits for the measured phase.
 */
function startDeadlines(input: LoadInput, stop: StopController, observer: LoadObserver): ArmedDeadlines {
  // Any length (--benchmark-timeout-sec, --duration): past setTimeout's 24.8 days a chain of timers (util/long-timer.ts).
  const timers: LongTimer[] = [];
  const onStopping = (): void => observer.onPhase?.('stopping', String(stop.reason));
  stop.stopping.addEventListener('abort', onStopping, { once: true });
  timers.push(setLongTimeout(() => stop.abortInFlight('benchmark_timeout'), input.deadlines.benchmarkMs));
  const unfollow = stop.followSignal(input.signal, input.deadlines.stopGraceMs);
  const unfollowStop = stop.followStopSignal(input.stopSignal);
  return { timers, unfollow, unfollowStop };
}

/** Ends the run: clears its timers, closes the expected-cache model, then stops following the caller's signals. */
async function releaseDeadlines(armed: ArmedDeadlines, ctx: TurnContext): Promise<void> {
  for (const timer of armed.timers) timer.clear();
  await ctx.expectedCache?.close();
  armed.unfollow();
  armed.unfollowStop();
}

/** A trace's prompt text, made from its hash ids under the run's tokenizer; warns when the blocks come out inexact. */
function tracePrompts(input: LoadInput, warn: (message: string) => void): HashBlockText {
  const prompts = new HashBlockText(input.counter.tokenizer, input.load.seed);
  if (!prompts.exact) {
    warn(`the tokenizer ${input.counter.tokenizer.name} merges the trace's prompt words: hash blocks are not exactly --trace-block-size tokens, so prefix sharing is approximate`);
  }
  return prompts;
}

/**
 * The run's expected-cache model: with its own index, or in a worker thread fed to the run's one index in the
 * coordinator (issue #31).
 */
function expectedCacheOf(input: LoadInput, stop: StopController): ExpectedCache {
  const config = input.expectedCache ?? { blockSize: 16 };
  const port = input.expectedCacheIndexPort;
  return new ExpectedCache(input.counter, config, stop.abort, port === undefined ? undefined : new RemoteIndexDriver(port, config));
}

/** The context every turn runs in: the request template, client, counter and expected cache, reporting to the tally. */
function turnContext(input: LoadInput, stop: StopController, tally: RunTally, traced: boolean): TurnContext {
  const { observer = {} } = input;
  return {
    request: input.request,
    client: input.client,
    model: input.model,
    counter: input.counter,
    expectedCache: expectedCacheOf(input, stop),
    stop,
    // A turn's warnings are the run's: kept in its result as well as told to the observer.
    observer: { ...observer, onWarning: tally.warn },
    runStartMs: performance.now(),
    loadStartMs: performance.now(),
    onAnswerMismatch: () => {
      tally.answerMismatches += 1;
    },
    onCrash: tally.onCrash,
    traceCache: traced ? new TracePrefixCache() : undefined,
    traceSpeed: input.load.trace.speed,
  };
}

/**
 * Parts of one run (worker threads, shards with --start-at) start together: waits for the common start, and times
 * every record from it so the parts' records line up.
 */
async function waitForCommonStart(startEpochMs: number, stop: StopController, ctx: TurnContext): Promise<void> {
  await sleep(startEpochMs - (performance.timeOrigin + performance.now()), stop.stopping);
  ctx.runStartMs = startEpochMs - performance.timeOrigin;
}

/** This part's conversations, in dataset order, each ready to run (from its resume point with --resume). */
function prepareConversations(input: LoadInput, prompts: HashBlockText | undefined): ActiveConversation[] {
  const { part } = input;
  const conversations: ActiveConversation[] = [];
  input.conversations.forEach((c, i) => {
    const index = input.datasetIndices?.[i] ?? i;
    if (input.datasetIndices === undefined && part !== undefined && !ownsConversation(i, part.index, part.count)) return;
    const active = new ActiveConversation(c, index, input.load.maxTurns, { prompts });
    const resume = input.resumePoints?.get(index);
    if (resume !== undefined) active.resumeAt(resume.turnsDone, resume.lastInputTokens, resume.lastOutputTokens);
    conversations.push(active);
  });
  return conversations;
}

/** How a conversation that ended in warmup ended. */
interface WarmupOutcome {
  conversation: ActiveConversation;
  ok: boolean;
}

/** --warmup-step with this part's share of the clients: adds to `outcomes` the conversations that ended in it. */
function warmUp(run: LoadRun, conversations: readonly ActiveConversation[], outcomes: WarmupOutcome[]): Promise<{ remaining: ActiveConversation[]; sent: number }> {
  const { load, part } = run.input;
  const clientsHere = part === undefined ? load.clients : shareOf(load.clients, part.index, part.count);
  run.observer.onPhase?.('warmup');
  return runWarmup(conversations, run.ctx, Math.max(1, clientsHere), load.seed, (conversation, ok) => outcomes.push({ conversation, ok }), run.tally.onCrash);
}

/** The pool the load takes its work from, of `owned` conversations of which these remain; the turns take -n from it. */
function startPool(run: LoadRun, conversations: readonly ActiveConversation[], owned: number): WorkPool {
  const pool = new WorkPool(conversations, owned, run.budget, { keepFinished: run.input.keepFinishedConversations, onEnd: (outcome) => run.observer.onConversationEnd?.(outcome) });
  // Sub-agents' requests count in -n like the sessions' (warmup ones, before this, do not).
  run.ctx.takeRequest = () => pool.takeRequest();
  return pool;
}

/** Counts the conversations that ended in warmup in the pool, completed or failed. */
function countWarmupOutcomes(pool: WorkPool, outcomes: readonly WarmupOutcome[]): void {
  for (const { conversation, ok } of outcomes) {
    if (ok) pool.completedInWarmup(conversation);
    else pool.failedInWarmup();
  }
}

/** Stops the run (for -n, or as completed), says what it left unfinished, and makes its result. */
function finishResult(run: LoadRun, pool: WorkPool, loadModel: LoadModel, warmupRequestsSent: number): LoadResult {
  const { stop, tally } = run;
  const counts = pool.counts();
  stop.stop(pool.budgetSpent ? 'max_requests' : 'completed');
  const stopReason = finalStopReason(stop.reason, counts);
  // A part of a larger run leaves this warning to its coordinator, which sees every part's counts.
  if (run.input.part?.coordinated !== true) for (const warning of countWarnings(counts, stopReason)) tally.warn(warning);
  const mismatches = tally.answerMismatches;
  if (mismatches > 0) tally.warn(`--verify-output: ${counted(mismatches, 'answer')} ${mismatches === 1 ? 'differs' : 'differ'} from the dataset's`);
  return {
    stopReason,
    loadModel: describeLoadModel(loadModel),
    conversations: counts,
    finishedConversations: pool.finishedConversations,
    runStartMs: run.ctx.runStartMs,
    runEndMs: performance.now(),
    requestsSent: run.budget.taken,
    warmupRequestsSent,
    crashedTasks: tally.crashedTasks,
    answerMismatches: tally.answerMismatches,
    warnings: tally.warnings,
  };
}
