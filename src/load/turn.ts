import type { ChatClient } from '../client/chat-client.js';
import { prepareMessageBytes } from '../client/request-body.js';
import { isRetryable, retryDelayMs } from '../client/retry.js';
import type { ChatRequest, StreamResult } from '../client/types.js';
import { buildRecord, type RecordContext } from '../metrics/build-record.js';
import type { TracePrefixCache } from '../prefix-cache/trace-blocks.js';
import type { RequestRecord } from '../metrics/record.js';
import type { RequestPlan } from '../options/run-plan.js';
import type { Rng } from '../util/rng.js';
import type { ChatMessage, TokenCounter } from '../tokenizer/index.js';
import type { ActiveConversation } from './active-conversation.js';
import type { ExpectedCache, ExpectedCacheTicket } from '../cache-model/expected-cache.js';
import { joinForks } from './fork-join.js';
import { countTextYielding } from '../tokenizer/sliced.js';
import { localPromptTokens, messageTokens } from './message-tokens.js';
import { sleep } from './sleep.js';
import { stopMessage, type StopController } from './stop.js';
import type { LoadObserver } from './types.js';

/** What every turn needs, fixed for the run. */
export interface TurnContext {
  request: RequestPlan;
  client: ChatClient;
  model: string;
  counter: TokenCounter;
  /** The global expected-cache model (issue #13); without it records carry the own-history figure. */
  expectedCache?: ExpectedCache;
  stop: StopController;
  observer: LoadObserver;
  /** performance.now() at the run's start: record times are relative to it. */
  runStartMs: number;
  /** performance.now() at which the load model starts (after any warmup): open-loop arrivals are offsets from it. */
  loadStartMs: number;
  /** Counts --verify-output mismatches. */
  onAnswerMismatch(): void;
  /** Takes one request from the -n budget for a step (false: spent). Unset: no budget (warmup, tests). */
  takeRequest?: () => boolean;
  /** A sub-agent task that died of a bug (the run records it and goes on). */
  onCrash?: (what: string, error: unknown) => void;
  /** In a trace replay: the theoretical prefix cache over the trace's hash ids (expected cached tokens of trace turns). */
  traceCache?: TracePrefixCache;
  /** --trace-speed: a trace sub-agent's turns go at their times divided by it (fork-join.ts). */
  traceSpeed?: number;
}

/**
 * The expected cache of a trace turn whose prompt is its hash blocks (a self-contained one, or the first of a
 * session): counted on the trace's hash ids, across sessions, as `chatload trace stats` counts it. Undefined for every
 * other turn, whose figure comes from the global expected-cache model (ExpectedCache).
 */
function traceExpectedCachedTokens(ctx: TurnContext, conversation: ActiveConversation): number | undefined {
  const turn = conversation.traceTurn;
  const trace = conversation.conversation.trace;
  if (turn === undefined || trace === undefined || ctx.traceCache === undefined || turn.messages !== undefined) return undefined;
  if (trace.context === 'history' && conversation.started) return undefined;
  const full = Math.floor(turn.inputLength / trace.blockSize);
  return ctx.traceCache.access(turn.hashIds, full) * trace.blockSize;
}

/** max_tokens of a turn: the plan's number, or with `recorded` the recorded answer's length (none without one). */
function tokenLimit(limit: RequestPlan['maxTokens'], recordedAnswerTokens: () => number | undefined): number | undefined {
  if (limit !== 'recorded') return limit;
  const n = recordedAnswerTokens();
  return n === undefined ? undefined : Math.max(1, n);
}

/** The request for the conversation's next turn; `recordedAnswerTokens` is the recorded answer's count, when needed. */
function buildRequest(ctx: TurnContext, conversation: ActiveConversation, messages: ChatMessage[], recordedAnswerTokens: number | undefined): ChatRequest {
  const template = ctx.request;
  const request: ChatRequest = {
    model: ctx.model,
    messages,
    stream: template.stream,
  };
  const tools = conversation.tools;
  if (tools !== undefined) request.tools = tools;
  // A generated dataset says each turn's output length itself; otherwise count the recorded answer, as the reference.
  const maxTokens = tokenLimit(template.maxTokens, () => conversation.datasetMaxTokens ?? recordedAnswerTokens);
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  if (template.minTokens !== undefined) request.minTokens = template.minTokens;
  if (template.ignoreEos) request.ignoreEos = true;
  if (template.temperature !== undefined) request.temperature = template.temperature;
  const traceTools = conversation.traceTurn?.tools;
  // A trace's tool definitions go as they are; --extra-body still has the last word.
  if (traceTools !== undefined) request.extraBody = { tools: traceTools, ...template.extraBody };
  else if (template.extraBody !== undefined) request.extraBody = template.extraBody;
  if (template.sendConversationId) request.conversationId = conversation.id;
  withEndpointFields(ctx, conversation, request);
  return request;
}

/**
 * What the other endpoints need beyond the messages: /v1/completions the prompt text (the run's chat template applied
 * here, client-side, as the server would apply it to `messages`); the Responses API with --responses-state server
 * `store: true` and the response the server holds the history under. A template that fails throws (a crashed task).
 */
function withEndpointFields(ctx: TurnContext, conversation: ActiveConversation, request: ChatRequest): void {
  const { endpoint, responsesState } = ctx.request;
  if (endpoint === 'completions') request.prompt = ctx.counter.template.apply(request.messages, { addGenerationPrompt: true });
  if (endpoint === 'responses' && responsesState === 'server') {
    request.storeResponse = true;
    const held = conversation.heldByServer;
    if (held !== undefined) request.previousResponse = held;
  }
}

/** Sends with up to --max-retries retries of retryable failures, with backoff that honours Retry-After. */
async function sendWithRetries(
  ctx: TurnContext,
  request: ChatRequest,
  rng: Rng,
): Promise<{ result: StreamResult; retries: number; staleConnectionResends: number }> {
  let retries = 0;
  let staleConnectionResends = 0;
  for (;;) {
    const result = await ctx.client.send(request, ctx.stop.abort);
    staleConnectionResends += result.staleConnectionResends ?? 0;
    const error = result.error;
    if (error === undefined || retries >= ctx.request.maxRetries || !isRetryable(error)) return { result, retries, staleConnectionResends };
    retries += 1;
    // A retry chain in flight finishes after a soft stop (-n taken, --duration, early stop): cutting it would record
    // a failure the retries were there to absorb. Only the hard stop ends it, and the cut is an abort, not a failure.
    const waited = await sleep(retryDelayMs(retries, result.retryAfterMs, () => rng.next()), ctx.stop.abort);
    if (!waited) {
      result.error = { kind: 'aborted', message: `${stopMessage(ctx.stop.abort)} before retry ${retries} (the last attempt: ${error.message})` };
      return { result, retries: retries - 1, staleConnectionResends };
    }
  }
}

/** Observers already told that a server lost stored responses: the run says it once. */
const toldLostResponses = new WeakSet<LoadObserver>();

/**
 * --responses-state server: a server that no longer holds the previous response (400 `previous_response_not_found`,
 * OpenAI's answer; vLLM's store is lost on restart and bounded) gets the whole history instead, at once, and the run
 * says so once. The record is the resend's. Other requests go as sendWithRetries sends them.
 */
async function sendWithHistoryFallback(ctx: TurnContext, request: ChatRequest, rng: Rng): ReturnType<typeof sendWithRetries> {
  // Once per turn (LoadObserver.onSend): neither a retry nor the history resend below is another send to count.
  ctx.observer.onSend?.();
  const sent = await sendWithRetries(ctx, request, rng);
  const error = sent.result.error;
  if (request.previousResponse === undefined || error?.status !== 400 || !/previous_response|previous response/i.test(`${error.bodyExcerpt ?? ''} ${error.message}`)) return sent;
  const held = request.previousResponse.id;
  delete request.previousResponse;
  if (!toldLostResponses.has(ctx.observer)) {
    toldLostResponses.add(ctx.observer);
    ctx.observer.onWarning?.(`the server no longer holds response ${held} (${error.message}): that turn, and any like it, sent the whole history instead of previous_response_id`);
  }
  const again = await sendWithRetries(ctx, request, rng);
  return { ...again, retries: again.retries + sent.retries, staleConnectionResends: again.staleConnectionResends + sent.staleConnectionResends };
}

/** When the load model meant to send a turn (performance.now() ms) and how long it waited for a concurrency slot. */
export interface TurnSchedule {
  scheduledAtMs: number;
  queueMs: number;
}

/** One turn as a load model asks for it: whose, sent by which client (its id and random stream), warmup or not, and when. */
export interface TurnCall {
  conversation: ActiveConversation;
  clientId: number;
  rng: Rng;
  warmup: boolean;
  /** When the load model meant to send it and how long it queued; unset where the model sends at once. */
  schedule?: TurnSchedule;
}

/** How a conversation stands after a step: more turns to go, done, ended on a failed request, or nothing was sent (-n spent). */
export type TurnOutcome = 'more' | 'done' | 'failed' | 'budget_spent';

/**
 * The step every load model takes (fixed clients, open-loop and trace sessions, sub-agents): one request from the -n
 * budget (spent: the run stops and nothing is sent), the turn with its record, and how the conversation stands after it.
 */
export async function takeTurn(ctx: TurnContext, call: TurnCall): Promise<TurnOutcome> {
  if (ctx.takeRequest !== undefined && !ctx.takeRequest()) {
    ctx.stop.stop('max_requests');
    return 'budget_spent';
  }
  const record = await runTurn(ctx, call);
  return record.status === 'error' ? 'failed' : call.conversation.done ? 'done' : 'more';
}

/**
 * Sends the conversation's next turn (with retries), builds its record, moves the conversation on with the answer
 * that goes into the history (the server's, or the recorded one with --replay-dataset-answers), and hands the record
 * to the run (LoadObserver.onRecord: the one place the load's records leave it, after its sub-agents' own).
 */
export async function runTurn(ctx: TurnContext, call: TurnCall): Promise<RequestRecord> {
  const record = await sendTurn(ctx, call);
  ctx.observer.onRecord?.(record);
  return record;
}

/** runTurn's work: the record of the conversation's next turn, its answer taken into the history. */
async function sendTurn(ctx: TurnContext, call: TurnCall): Promise<RequestRecord> {
  const { conversation, clientId, rng, warmup, schedule } = call;
  const tokenizer = ctx.counter.tokenizer;
  const traceExpected = traceExpectedCachedTokens(ctx, conversation);
  const newTokens = await newInputTokens(ctx, conversation);
  const recorded = conversation.recordedMessage;
  const needRecordedCount = recorded !== undefined && ctx.request.maxTokens === 'recorded' && conversation.datasetMaxTokens === undefined;
  const messages = await preparedMessages(conversation);
  const request = buildRequest(ctx, conversation, messages, needRecordedCount ? await messageTokens(tokenizer, recorded) : undefined);
  // Tool definitions are prompt tokens where they are sent: chat requests only (tokenizer/tools-prompt.ts).
  const promptTools = ctx.request.endpoint === 'chat' ? request.tools : undefined;
  const ticket = ctx.expectedCache === undefined ? undefined : await cacheTicket(ctx, ctx.expectedCache, conversation, request, promptTools);
  const { result, retries, staleConnectionResends } = await sendWithHistoryFallback(ctx, request, rng);
  // A server that leaves 0 cached tokens out of its usage (RequestPlan.zeroCachedOmitted), unless it sent a bad count.
  if (ctx.request.zeroCachedOmitted && result.usage !== undefined && !result.invalidUsage?.includes('cached_tokens')) result.usage.cachedTokens ??= 0;
  // The prompt's ids never came with the answer (an older vLLM, a failure): the model asks the tokenize endpoint.
  if (ticket !== undefined) ctx.expectedCache!.supplyPromptIds(ticket, undefined);
  const outputCounts = result.usage === undefined ? await countOutputYielding(tokenizer, result) : undefined;
  // Its lookup may wait behind another request's large registration (issue #14): the hit is final after this.
  if (ticket !== undefined) await ctx.expectedCache!.settled(ticket);
  // The record is built once, with all the load knows (issue #33): a divergence is of a server's answer that goes
  // into the history, so none when the recorded answer is replayed.
  const replaysRecorded = ctx.request.replayDatasetAnswers && recorded !== undefined;
  const toolDivergence = result.error === undefined && !replaysRecorded ? conversation.toolDivergence(result.toolCalls) : null;
  const record = buildRecord(
    {
      conversationId: conversation.id,
      conversationIndex: conversation.index,
      turn: conversation.nextTurn,
      clientId,
      warmup,
      retries,
      staleConnectionResends,
      runStartMs: ctx.runStartMs,
      inputNumTurns: request.messages.length,
      lastUserMessageTokens: newTokens,
      ...expectedFigures(ctx, conversation, ticket, traceExpected, result.usage?.cachedTokens ?? null),
      maxTokens: request.maxTokens ?? null,
      // A completions prompt is the template already applied; with previous_response_id the server holds the same history.
      countInputTokens: () => (request.prompt === undefined ? localPromptTokens(ctx.counter, request.messages, promptTools) : tokenizer.count(request.prompt)),
      countTextTokens: (text) => outputCounts?.get(text) ?? tokenizer.count(text),
      scheduledAtMs: schedule?.scheduledAtMs,
      queueMs: schedule?.queueMs,
      parentConversationId: conversation.parentId,
      toolDivergence,
    },
    result,
  );
  // The server cached what it generated after the prompt: the ids it returned (vLLM's return_token_ids: exactly
  // what it cached), else the answer as it came back, which the model encodes (in slices, issue #14) or asks the
  // server to (not known with reasoning streamed apart).
  const answer = result.outputTokenIds ?? { text: result.content, reasoning: result.reasoning.length > 0, finishReason: record.finish_reason };
  if (ticket !== undefined) await ctx.expectedCache!.end(ticket, record.status === 'ok' ? answer : undefined);
  if (record.status === 'ok') {
    if (ctx.request.verifyOutput && recorded !== undefined && recorded.content !== result.content) ctx.onAnswerMismatch();
    ctx.observer.onContent?.({ conversationId: conversation.id, turn: record.turn, user: conversation.nextUserMessage, answer: result.content });
    // What goes into the history is what the next turn's expected cache counts: the recorded answer when replaying.
    if (replaysRecorded) {
      conversation.useRecorded(record.input_num_tokens, await messageTokens(tokenizer, recorded));
    } else {
      // With --keep-reasoning the reasoning goes back too, so all of the completion can be in the next prompt's prefix.
      // Only chat sends reasoning back (as reasoning_content): the Responses input items and a completions prompt leave it out.
      const keep = ctx.request.keepReasoning && ctx.request.endpoint === 'chat' && result.reasoning.length > 0;
      const answerTokens = keep ? record.output_num_tokens : await sentBackTokens(record, result, tokenizer);
      const answer = { content: result.content, toolCalls: result.toolCalls, reasoning: keep ? result.reasoning : undefined };
      // The recorded answer's count is needed only when the server may diverge from it (a tool call on either side).
      const mayDiverge = recorded !== undefined && (recorded.tool_calls !== undefined || result.toolCalls !== undefined);
      const recordedTokens = mayDiverge ? await messageTokens(tokenizer, recorded) : 0;
      conversation.answer(answer, record.input_num_tokens, answerTokens, () => recordedTokens);
    }
    if (request.storeResponse === true) conversation.noteServerResponse(result.responseId);
    // Sub-agents forked after this answer run now; the conversation's next step waits for them.
    await joinForks(ctx, conversation, (child) => takeTurn(ctx, { conversation: child, clientId, rng, warmup }));
  }
  return record;
}

/** The request's messages, each one's JSON made once: a large new one (or last step's large answer) in slices. */
async function preparedMessages(conversation: ActiveConversation): Promise<ChatMessage[]> {
  const messages = conversation.requestMessages();
  for (const m of messages) {
    const encoding = prepareMessageBytes(m);
    if (encoding !== undefined) await encoding;
  }
  return messages;
}

/**
 * Local counts of what is new in this step, each message counted once and kept, in slices that let the loop go. A
 * synthesised trace prompt is input_length tokens by construction: no need to count it.
 */
async function newInputTokens(ctx: TurnContext, conversation: ActiveConversation): Promise<number> {
  const traceTurn = conversation.traceTurn;
  if (traceTurn !== undefined && traceTurn.messages === undefined) return traceTurn.inputLength;
  let tokens = 0;
  for (const m of conversation.nextInput()) tokens += await messageTokens(ctx.counter.tokenizer, m);
  return tokens;
}

/**
 * The expected cache's ticket for the request about to be sent: its prompt encoded (or asked of the server after the
 * send), looked up as its first token comes (see ExpectedCache), its ids asked of the answer where the server gives them.
 */
async function cacheTicket(ctx: TurnContext, cache: ExpectedCache, conversation: ActiveConversation, request: ChatRequest, promptTools: ChatRequest['tools']): Promise<ExpectedCacheTicket> {
  const ticket = await cache.begin(conversation, request.messages, request.maxTokens, promptTools);
  // At the first token's own time (the phase's, client/io-clock.ts): the lookup's batch is read from these times.
  request.onFirstToken = (atMs) => cache.prefilled(ticket, atMs);
  // The router's choice, named by the response head before the first token: the model's per-replica caches.
  request.onReplica = (replica) => cache.routed(ticket, replica);
  if (cache.idsFromResponse) askTokenIds(ctx, request, ticket);
  return ticket;
}

/**
 * vLLM's return_token_ids on a chat request: the answer brings the prompt's ids (its first chunk) and the generated
 * ones, no extra request. Other endpoints have no such field: their prompt's ids are asked of /tokenize at once.
 */
function askTokenIds(ctx: TurnContext, request: ChatRequest, ticket: ExpectedCacheTicket): void {
  if (ctx.request.endpoint !== 'chat') {
    ctx.expectedCache!.supplyPromptIds(ticket, undefined);
    return;
  }
  request.returnTokenIds = true;
  request.onPromptTokenIds = (ids) => ctx.expectedCache!.supplyPromptIds(ticket, ids);
}

/**
 * The record's expected-cache fields: a synthesised trace turn's from its hash ids (the same as `trace stats`), else
 * the model's (its figures, and its account of what the server reported), else the own-history figure alone.
 */
function expectedFigures(
  ctx: TurnContext,
  conversation: ActiveConversation,
  ticket: ExpectedCacheTicket | undefined,
  traceExpected: number | undefined,
  cached: number | null,
): Pick<RecordContext, 'expectedCachedTokens' | 'expectedCachedTokensInfinite' | 'expectedCachedTokensOwnHistory' | 'expectedCachedTokensPerReplica' | 'cacheModel'> {
  const own = conversation.expectedCachedTokens;
  if (traceExpected !== undefined) return { expectedCachedTokens: traceExpected, expectedCachedTokensInfinite: traceExpected, expectedCachedTokensOwnHistory: own };
  if (ticket === undefined) return { expectedCachedTokens: own, expectedCachedTokensInfinite: own, expectedCachedTokensOwnHistory: own };
  const account = ctx.expectedCache!.account(ticket, cached);
  return {
    expectedCachedTokens: ticket.hit.expected,
    expectedCachedTokensInfinite: ticket.hit.infinite,
    expectedCachedTokensOwnHistory: own,
    expectedCachedTokensPerReplica: ticket.hit.perReplica,
    cacheModel: { inputTokens: ticket.known ? ticket.promptLength : null, warmStartTokens: account.warmStartTokens, missCause: account.missCause },
  };
}

/** Local counts of an answer's texts (content, reasoning, tool-call arguments) when the server gave no usage, in slices. */
async function countOutputYielding(tokenizer: TokenCounter['tokenizer'], result: StreamResult): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const texts = [result.content, result.reasoning, ...(result.toolCalls ?? []).map((c) => c.function.arguments)];
  for (const text of texts) if (text !== '' && !counts.has(text)) counts.set(text, await countTextYielding(tokenizer, text));
  return counts;
}

/**
 * Tokens of the answer that go back into the history: the completion without its reasoning, which is not sent back,
 * so a prefix cache cannot hold it for the next turn (counting it made efficiency look like a 7% cache loss).
 * The server's `reasoning_tokens` when it reports them; else a local count of the content when reasoning streamed.
 */
async function sentBackTokens(record: RequestRecord, result: StreamResult, tokenizer: TokenCounter['tokenizer']): Promise<number> {
  if (record.reasoning_tokens !== null) return Math.max(0, record.output_num_tokens - record.reasoning_tokens);
  return result.reasoning.length > 0 ? countTextYielding(tokenizer, result.content) : record.output_num_tokens;
}
