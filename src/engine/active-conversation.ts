import type { Conversation, TraceTurn } from '../conversation/types.js';
import type { HashBlockText } from '../synth/hash-blocks.js';
import { messageText } from '../tokenizer/content.js';
import type { ChatMessage } from '../tokenizer/types.js';

/** One user turn of a dataset conversation: the user message and the recorded answer, when the dataset has one. */
interface DatasetTurn {
  /** Text, or text and image parts. */
  user: ChatMessage['content'];
  recordedAnswer: string | undefined;
}

/**
 * A conversation being replayed: its history so far (system message, then every user message with the answer
 * that was used for it), which turn comes next, and the token counts of its last request (for the expected cache).
 */
export class ActiveConversation {
  readonly conversation: Conversation;
  /** Position in the dataset (0-based). */
  readonly index: number;
  readonly #turns: DatasetTurn[];
  readonly #history: ChatMessage[] = [];
  #next = 0;
  #lastPromptTokens = 0;
  #lastCompletionTokens = 0;
  /** --responses-state server: the last response's id and how many history messages the server holds under it. */
  #held: { id: string; messagesHeld: number } | undefined;
  /** A trace session's prompt maker, and the text made for the next turn (made once, when first asked for). */
  readonly #prompts: HashBlockText | undefined;
  #traceText: string | undefined;

  /**
   * `maxTurns` caps messages as the reference's --max-turns does: user and assistant messages together. `prompts`
   * makes a trace session's prompts from their hash ids (conversations with a `trace` need it).
   */
  constructor(conversation: Conversation, index: number, maxTurns?: number, prompts?: HashBlockText) {
    this.conversation = conversation;
    this.index = index;
    this.#prompts = prompts;
    const turns: DatasetTurn[] = [];
    if (conversation.trace !== undefined) {
      for (let t = 0; t < conversation.trace.turns.length; t++) turns.push({ user: '', recordedAnswer: undefined });
    } else {
      const messages = conversation.messages;
      let i = 0;
      if (messages[0]?.role === 'system') {
        this.#history.push(messages[0]);
        i = 1;
      }
      for (; i < messages.length; i += 2) {
        const answer = messages[i + 1];
        turns.push({ user: messages[i]!.content, recordedAnswer: answer === undefined ? undefined : messageText(answer.content) });
      }
    }
    this.#turns = maxTurns === undefined ? turns : turns.slice(0, Math.ceil(maxTurns / 2));
  }

  /** The next turn's trace request, for a trace session. */
  get traceTurn(): TraceTurn | undefined {
    return this.conversation.trace?.turns[this.#next];
  }

  /** The next user message: the dataset's (text, or text and image parts), or for a trace turn the text of its hash blocks (made once). */
  #userContent(): ChatMessage['content'] {
    const turn = this.traceTurn;
    if (turn === undefined) return this.#turns[this.#next]!.user;
    if (this.#traceText === undefined) {
      if (this.#prompts === undefined) throw new Error(`conversation ${this.id}: a trace session needs a prompt maker`);
      this.#traceText = this.#prompts.prompt(turn.hashIds, turn.inputLength, this.conversation.trace!.blockSize);
    }
    return this.#traceText;
  }

  /** True when the next turn is sent alone, without the history (a self-contained trace turn). */
  get #selfContained(): boolean {
    return this.conversation.trace?.context === 'self-contained';
  }

  get id(): string {
    return this.conversation.id;
  }

  /** True when every turn (up to --max-turns) has been answered. */
  get done(): boolean {
    return this.#next >= this.#turns.length;
  }

  /** True once a turn has been answered: a conversation that was only picked up counts as not started. */
  get started(): boolean {
    return this.#next > 0;
  }

  /** 1-based number of the turn that will be sent next. */
  get nextTurn(): number {
    return this.#next + 1;
  }

  /** The user turns this conversation will send. */
  get turnCount(): number {
    return this.#turns.length;
  }

  /** The messages of the next request: the whole history, then the next user message. */
  requestMessages(): ChatMessage[] {
    const pre = this.traceTurn?.messages;
    if (pre !== undefined) return pre.slice();
    const messages = this.#selfContained ? [] : this.#history.slice();
    messages.push({ role: 'user', content: this.#userContent() });
    return messages;
  }

  /**
   * The next user message's text alone (image parts left out: what local counts and --print-content see); for a
   * pre-formatted trace prompt, its last message.
   */
  get nextUserMessage(): string {
    const pre = this.traceTurn?.messages;
    if (pre !== undefined) return messageText(pre[pre.length - 1]?.content ?? '');
    return messageText(this.#userContent());
  }

  /** The dataset's own max_tokens for the next turn (generated datasets set one per turn, traces their output_length), if any. */
  get datasetMaxTokens(): number | undefined {
    return this.traceTurn?.outputLength ?? this.conversation.turns?.[this.#next]?.maxTokens;
  }

  /** The dataset's recorded answer to the next turn, if it has one. */
  get recordedAnswer(): string | undefined {
    return this.#turns[this.#next]?.recordedAnswer;
  }

  /** Prompt + completion tokens of the previous request: what a perfect prefix cache could reuse now. */
  get expectedCachedTokens(): number {
    return this.#lastPromptTokens + this.#lastCompletionTokens;
  }

  /**
   * Records the answer to the next turn and moves on. `answer` (and `reasoning`, with --keep-reasoning) is what goes
   * into the history; `completionTokens` are the tokens of what went back.
   */
  advance(answer: string, promptTokens: number, completionTokens: number, reasoning?: string): void {
    const assistant: ChatMessage = reasoning === undefined ? { role: 'assistant', content: answer } : { role: 'assistant', content: answer, reasoning_content: reasoning };
    // Self-contained trace turns are logged too, for -o, though the next one carries its own context (requestMessages).
    const pre = this.traceTurn?.messages;
    this.#history.push({ role: 'user', content: pre !== undefined ? this.nextUserMessage : this.#userContent() }, assistant);
    this.#lastPromptTokens = promptTokens;
    this.#lastCompletionTokens = completionTokens;
    this.#traceText = undefined;
    this.#next += 1;
  }

  /**
   * --responses-state server: notes the id of the response to the turn just answered (after `advance`), under which
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
   * --resume: skips the first `turnsDone` turns, answered by an interrupted run, putting the dataset's recorded answers
   * in the history (the answers the server gave are not on disk). `lastInputTokens` and `lastOutputTokens` are the
   * last answered turn's. Throws when a skipped turn has no recorded answer (check with canResumeAt first).
   */
  resumeAt(turnsDone: number, lastInputTokens: number, lastOutputTokens: number): void {
    if (!this.canResumeAt(turnsDone)) throw new Error(`conversation ${this.id}: no recorded answer to resume after turn ${turnsDone}`);
    for (let t = 0; t < turnsDone; t++) this.advance(this.#turns[t]!.recordedAnswer!, 0, 0);
    this.#lastPromptTokens = lastInputTokens;
    this.#lastCompletionTokens = lastOutputTokens;
  }

  /** True when each of the first `turnsDone` turns has a recorded answer, and turnsDone is within the turns. */
  canResumeAt(turnsDone: number): boolean {
    return turnsDone <= this.#turns.length && this.#turns.slice(0, turnsDone).every((t) => t.recordedAnswer !== undefined);
  }

  /** The conversation as replayed so far, with the answers that were used (the reference's -o format). */
  replayed(): Conversation {
    return { id: this.conversation.id, messages: this.#history.slice() };
  }
}
