import type { Conversation, TraceTurn } from '../conversation/types.js';
import type { ToolDivergence } from '../metrics/record.js';
import type { HashBlockText } from '../synth/hash-blocks.js';
import { displayText, messageText } from '../tokenizer/content.js';
import type { ChatMessage, ToolCall } from '../tokenizer/types.js';

/**
 * One step of a dataset conversation: one request. Its input is what the dataset adds before it (a user message, or
 * the tool results answering the previous answer's calls, maybe followed by a user message); `recorded` is the
 * dataset's answer, when it has one. Sub-agents forked after this step's answer are in `forks`.
 */
interface DatasetStep {
  input: ChatMessage[];
  recorded: ChatMessage | undefined;
  forks: Conversation[] | undefined;
}

/** What the server answered, as far as the history needs it. */
export interface ServerAnswer {
  content: string;
  toolCalls?: readonly ToolCall[];
  /** With --keep-reasoning: the reasoning that goes back into the history. */
  reasoning?: string;
}

/** Where a sub-agent starts: its parent's id, the parent's history up to the fork point and that prompt's token count. */
export interface ForkStart {
  parentId: string;
  prefix: readonly ChatMessage[];
  prefixTokens: number;
}

/**
 * Splits a conversation's messages (after its system message) into steps; forks attach to the step they follow. A
 * trace session has one step per trace turn, its input made when the turn is sent (ActiveConversation.nextInput).
 */
function stepsOf(conversation: Conversation, first: number): DatasetStep[] {
  const forksAt = new Map<number, Conversation[]>();
  for (const child of conversation.forks ?? []) {
    const at = child.parent!.at;
    forksAt.set(at, [...(forksAt.get(at) ?? []), child]);
  }
  // A trace session's sub-agents (agentic traces) fork after the answer to turn `at`.
  if (conversation.trace !== undefined) return conversation.trace.turns.map((_, k) => ({ input: [], recorded: undefined, forks: forksAt.get(k) }));
  const messages = conversation.messages;
  const steps: DatasetStep[] = [];
  let input: ChatMessage[] = [];
  for (let i = first; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== 'assistant') {
      input.push(m);
      continue;
    }
    steps.push({ input, recorded: m, forks: forksAt.get(i) });
    input = [];
  }
  if (input.length > 0) steps.push({ input, recorded: undefined, forks: undefined });
  return steps;
}

/**
 * The requests a dataset holds: every conversation's steps up to --max-turns, its sub-agents' with them (all of
 * them, even past a cut parent's last step: an upper bound then). What -n can reach; less the first turns when the
 * warmup step sends them.
 */
export function requestsHeld(conversations: readonly Conversation[], maxTurns?: number, warmupStep = false): number {
  let held = 0;
  for (const c of conversations) {
    const first = c.trace === undefined && c.messages[0]?.role === 'system' ? 1 : 0;
    const steps = Math.min(stepsOf(c, first).length, maxTurns === undefined ? Infinity : Math.ceil(maxTurns / 2));
    held += (warmupStep ? Math.max(0, steps - 1) : steps) + (c.forks === undefined ? 0 : requestsHeld(c.forks, maxTurns));
  }
  return held;
}

/**
 * A conversation being replayed: its history so far (system message, then every step's input with the answer that
 * was used for it), which step comes next, and the token counts of its last request (for the expected cache).
 * A step is one request: a user turn, or (with tool calls) the answer to a group of tool results; `nextTurn` counts
 * steps. A sub-agent starts with its parent's history up to the fork point (`prefix`).
 */
export class ActiveConversation {
  readonly conversation: Conversation;
  /** Position in the dataset (0-based); a sub-agent has its parent's. */
  readonly index: number;
  /** The session a sub-agent forked from (undefined for a top-level conversation). */
  readonly parentId: string | undefined;
  readonly #steps: DatasetStep[];
  readonly #history: ChatMessage[] = [];
  /** Recorded call id -> the server's, for the tool results of the next step (the server named its own calls). */
  #callIds: Map<string, string> | undefined;
  /** The next step's input as sent (nextInput()), until the step is answered. */
  #input: readonly ChatMessage[] | undefined;
  #next = 0;
  #lastPromptTokens = 0;
  #lastCompletionTokens = 0;
  /** The sub-agents to run before the next step, and the history they share (the last request's prompt). */
  #pendingForks: { children: Conversation[]; prefix: ChatMessage[]; prefixTokens: number } | undefined;
  /** --responses-state server: the last response's id and how many history messages the server holds under it. */
  #held: { id: string; messagesHeld: number } | undefined;
  /** A trace session's prompt maker (the text of a turn is made once, in nextInput). */
  readonly #prompts: HashBlockText | undefined;

  /**
   * `maxTurns` caps messages as the reference's --max-turns does: user and assistant messages together (two per step).
   * `fork` gives a sub-agent its parent's history up to the fork point and that prompt's token count; `prompts`
   * makes a trace session's prompts from their hash ids (conversations with a `trace` need it).
   */
  constructor(conversation: Conversation, index: number, maxTurns?: number, start: { fork?: ForkStart; prompts?: HashBlockText } = {}) {
    this.conversation = conversation;
    this.index = index;
    const fork = start.fork;
    this.parentId = fork?.parentId;
    this.#prompts = start.prompts;
    const messages = conversation.messages;
    let first = 0;
    if (fork !== undefined) {
      this.#history.push(...fork.prefix);
      this.#lastPromptTokens = fork.prefixTokens;
    }
    if (conversation.trace === undefined && messages[0]?.role === 'system') {
      this.#history.push(messages[0]);
      first = 1;
    }
    const steps = stepsOf(conversation, first);
    this.#steps = maxTurns === undefined ? steps : steps.slice(0, Math.ceil(maxTurns / 2));
  }

  /** The prompt maker of a trace session (its sub-agents, trace sessions too, make theirs with it). */
  get prompts(): HashBlockText | undefined {
    return this.#prompts;
  }

  /** The next turn's trace request, for a trace session. */
  get traceTurn(): TraceTurn | undefined {
    return this.conversation.trace?.turns[this.#next];
  }

  /** True when the next request is sent alone, without the history (a self-contained trace turn). */
  get #selfContained(): boolean {
    return this.conversation.trace?.context === 'self-contained';
  }

  /**
   * A trace turn's input: the text of its hash blocks as one user message, or for a pre-formatted prompt (sent as it
   * is by requestMessages) its last message's text, which is what goes into the history.
   */
  #traceInput(turn: TraceTurn): ChatMessage[] {
    const pre = turn.messages;
    if (pre !== undefined) return [{ role: 'user', content: messageText(pre[pre.length - 1]?.content ?? '') }];
    if (this.#prompts === undefined) throw new Error(`conversation ${this.id}: a trace session needs a prompt maker`);
    return [{ role: 'user', content: this.#prompts.prompt(turn.hashIds, turn.inputLength, this.conversation.trace!.blockSize) }];
  }

  get id(): string {
    return this.conversation.id;
  }

  /** True when every step (up to --max-turns) has been answered. */
  get done(): boolean {
    return this.#next >= this.#steps.length;
  }

  /** True once a step has been answered: a conversation that was only picked up counts as not started. */
  get started(): boolean {
    return this.#next > 0;
  }

  /** 1-based number of the step that will be sent next. */
  get nextTurn(): number {
    return this.#next + 1;
  }

  /** The steps this conversation will send. */
  get turnCount(): number {
    return this.#steps.length;
  }

  /** The conversation's tool definitions (a sub-agent without its own uses its parent's, passed in its prefix's session). */
  get tools(): readonly Record<string, unknown>[] | undefined {
    return this.conversation.tools;
  }

  /**
   * The next step's input messages, tool results answering the server's call ids. Made once per step, so the request
   * and the history hold the same objects (each message's JSON and token count are kept by object).
   */
  nextInput(): readonly ChatMessage[] {
    if (this.#input !== undefined) return this.#input;
    const turn = this.traceTurn;
    if (turn !== undefined) {
      this.#input = this.#traceInput(turn);
      return this.#input;
    }
    const input = this.#steps[this.#next]!.input;
    const ids = this.#callIds;
    this.#input =
      ids === undefined
        ? input
        : input.map((m) => {
            const id = m.tool_call_id === undefined ? undefined : ids.get(m.tool_call_id);
            return id === undefined ? m : { ...m, tool_call_id: id };
          });
    return this.#input;
  }

  /** The messages of the next request: the whole history, then the next step's input. */
  requestMessages(): ChatMessage[] {
    const pre = this.traceTurn?.messages;
    if (pre !== undefined) return pre.slice();
    const messages = this.#selfContained ? [] : this.#history.slice();
    messages.push(...this.nextInput());
    return messages;
  }

  /**
   * The next step's input as --print-content shows it (the user message, or the tool results; each image or audio
   * part a short placeholder, never its bytes); for a pre-formatted trace prompt, its last message.
   */
  get nextUserMessage(): string {
    return this.nextInput()
      .map((m) => displayText(m.content))
      .join('\n');
  }

  /** The dataset's own max_tokens for the next step (generated datasets set one per step, traces their output_length), if any. */
  get datasetMaxTokens(): number | undefined {
    return this.traceTurn?.outputLength ?? this.conversation.turns?.[this.#next]?.maxTokens;
  }

  /** The dataset's recorded answer message to the next step, tool calls included. */
  get recordedMessage(): ChatMessage | undefined {
    return this.#steps[this.#next]?.recorded;
  }

  /** Prompt + completion tokens of the previous request: what a perfect prefix cache could reuse now. */
  get expectedCachedTokens(): number {
    return this.#lastPromptTokens + this.#lastCompletionTokens;
  }

  /**
   * Records the answer to the next step and moves on, following the server: its answer (tool calls included) goes
   * into the history, and when it called tools the dataset's recorded results for that step follow, answering the
   * server's call ids. When the server did not follow the dataset (no call where one was recorded, a call where none
   * was, or another number of calls) the recorded answer goes in instead, and the divergence is returned.
   * `recordedTokens` counts the recorded answer, called only when it is used.
   */
  /**
   * How the server's tool calls for the next step depart from the recorded answer's: `missing`, `unexpected`, `count`,
   * or null when they agree (or nothing was recorded). Changes nothing: the record is built with it before answer().
   */
  toolDivergence(serverCalls: readonly ToolCall[] | undefined): ToolDivergence | null {
    const recorded = this.#steps[this.#next]?.recorded;
    if (recorded === undefined) return null;
    const recordedCalls = recorded.tool_calls ?? [];
    const calls = serverCalls ?? [];
    if (recordedCalls.length > 0 && calls.length === 0) return 'missing';
    if (recordedCalls.length === 0 && calls.length > 0) return 'unexpected';
    return recordedCalls.length !== calls.length ? 'count' : null;
  }

  answer(server: ServerAnswer, promptTokens: number, completionTokens: number, recordedTokens: () => number): ToolDivergence | null {
    this.nextInput(); // the input as sent, before the call ids change
    const recorded = this.#steps[this.#next]!.recorded;
    const serverCalls = server.toolCalls ?? [];
    const recordedCalls = recorded?.tool_calls ?? [];
    const divergence = this.toolDivergence(server.toolCalls);
    if (divergence !== null) {
      this.useRecorded(promptTokens, recordedTokens());
      return divergence;
    }
    const message: ChatMessage = { role: 'assistant', content: server.content };
    if (serverCalls.length > 0) message.tool_calls = [...serverCalls];
    if (server.reasoning !== undefined) message.reasoning_content = server.reasoning;
    this.#callIds = serverCalls.length > 0 ? new Map(recordedCalls.map((c, i) => [c.id, serverCalls[i]!.id])) : undefined;
    this.#push(message, promptTokens, completionTokens);
    return null;
  }

  /** Moves on with the dataset's recorded answer in the history (--replay-dataset-answers, a divergence, --resume). */
  useRecorded(promptTokens: number, completionTokens: number): void {
    const recorded = this.#steps[this.#next]?.recorded;
    if (recorded === undefined) throw new Error(`conversation ${this.id}: step ${this.nextTurn} has no recorded answer`);
    this.nextInput(); // the input as sent, before the call ids change
    this.#callIds = undefined;
    this.#push(recorded, promptTokens, completionTokens);
  }

  #push(answer: ChatMessage, promptTokens: number, completionTokens: number): void {
    const step = this.#steps[this.#next]!;
    // A self-contained turn is sent alone: the history keeps only the last one (a long agentic trace's session would
    // otherwise hold every prompt it sent, each its whole context).
    if (this.#selfContained) this.#history.length = 0;
    this.#history.push(...this.nextInput());
    this.#input = undefined;
    if (step.forks !== undefined) this.#pendingForks = { children: step.forks, prefix: this.#history.slice(), prefixTokens: promptTokens };
    this.#history.push(answer);
    this.#lastPromptTokens = promptTokens;
    this.#lastCompletionTokens = completionTokens;
    this.#next += 1;
  }

  /**
   * The sub-agents forked after the last answer, once: they share that request's prompt (`prefix`, `prefixTokens`).
   * The parent runs them (concurrently) and waits for them before its next step.
   */
  takeForks(): { children: Conversation[]; prefix: ChatMessage[]; prefixTokens: number } | undefined {
    const forks = this.#pendingForks;
    this.#pendingForks = undefined;
    return forks;
  }

  /**
   * --responses-state server: notes the id of the response to the step just answered (after `advance`), under which
   * the server now holds the whole history; undefined (the server gave none) sends the whole history next time.
   */
  noteServerResponse(responseId: string | undefined): void {
    this.#held = responseId === undefined ? undefined : { id: responseId, messagesHeld: this.#history.length };
  }

  /** The response the server holds this conversation's history under, and how many messages that is; if any. */
  get heldByServer(): { id: string; messagesHeld: number } | undefined {
    return this.#held;
  }

  /**
   * --resume: skips the first `turnsDone` steps, answered by an interrupted run, putting the dataset's recorded answers
   * in the history (the answers the server gave are not on disk). `lastInputTokens` and `lastOutputTokens` are the
   * last answered step's. Throws when a skipped step has no recorded answer (check with canResumeAt first).
   */
  resumeAt(turnsDone: number, lastInputTokens: number, lastOutputTokens: number): void {
    if (!this.canResumeAt(turnsDone)) throw new Error(`conversation ${this.id}: no recorded answer to resume after turn ${turnsDone}`);
    for (let t = 0; t < turnsDone; t++) this.useRecorded(0, 0);
    this.#pendingForks = undefined; // sub-agents of skipped steps ran in the interrupted run
    this.#lastPromptTokens = lastInputTokens;
    this.#lastCompletionTokens = lastOutputTokens;
  }

  /** True when each of the first `turnsDone` steps has a recorded answer, and turnsDone is within the steps. */
  canResumeAt(turnsDone: number): boolean {
    return turnsDone <= this.#steps.length && this.#steps.slice(0, turnsDone).every((t) => t.recorded !== undefined);
  }

  /** The conversation as replayed so far, with the answers that were used (the reference's -o format). */
  replayed(): Conversation {
    return { id: this.conversation.id, messages: this.#history.slice() };
  }
}
