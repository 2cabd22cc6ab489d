/** One tool call of an assistant message, in OpenAI's shape (`arguments` is a JSON text, as the model wrote it). */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A text part of a message's content (OpenAI's content-part list). */
export interface TextPart {
  type: 'text';
  text: string;
}

/** An image part: `url` is a data URL (`data:image/png;base64,…`) or an http(s) URL, sent as it is; 0 local tokens. */
export interface ImageUrlPart {
  type: 'image_url';
  image_url: { url: string; detail?: string };
}

/**
 * An audio part (OpenAI's chat `input_audio`): `data` is the base64 file, with no `data:` prefix, `format` "wav" or
 * "mp3"; sent as it is; 0 local tokens.
 */
export interface InputAudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: 'wav' | 'mp3' };
}

/** One part of a message's content, as OpenAI's chat API takes it. */
export type ContentPart = TextPart | ImageUrlPart | InputAudioPart;

/**
 * One chat message, in OpenAI's chat shape: `content` is text or a list of text, image and audio parts (media pass
 * through to the server; local counts see only the text, tokenizer/content.ts `messageText`). An assistant message that only
 * calls tools has content '' (null on the wire: tokenizer/chat-message.ts `wireMessage`).
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** Text, or a list of text, image and audio parts. */
  content: string | ContentPart[];
  /** An assistant message's tool calls (its content is null on the wire when it has no text). */
  tool_calls?: ToolCall[];
  /** A `tool` message's answer to this call id. */
  tool_call_id?: string;
  /** An assistant message's reasoning, sent back with --keep-reasoning (the field vLLM and SGLang stream it in). */
  reasoning_content?: string;
}

import type { IdSink } from './id-sink.js';

/** Turns text into token ids. Shared by the client (local counts), the simulator (prompt and cache accounting) and the generator. */
export interface Tokenizer {
  /** A name for reports, e.g. `approx`. */
  readonly name: string;
  /** False when counts are a heuristic; reports then say the counts are approximate. */
  readonly exact: boolean;
  /** Token ids of `text`, with no special tokens added (special-token markup inside the text is recognised). */
  encode(text: string): number[];
  /**
   * Pushes the ids of `encode(text)` into `sink`, when the tokenizer can without building an array of them (the
   * approximate tokenizer): long texts are encoded this way (tokenizer/sliced.ts), with no garbage per id.
   */
  encodeTo?(text: string, sink: IdSink): void;
  /** The number of tokens `encode(text)` would return, without building the id array. */
  count(text: string): number;
  /**
   * Text of `ids` (special tokens kept, no clean-up), when the tokenizer can decode. The generator realizes text of an
   * exact token length by slicing ids and decoding them.
   */
  decode?(ids: readonly number[]): string;
}

/** How a template is applied: the generation prompt, and the request's tool definitions (rendered into the prompt). */
export interface ApplyOptions {
  addGenerationPrompt: boolean;
  /** The request's `tools`, when it has any (tokenizer/tools-prompt.ts). */
  tools?: readonly unknown[];
}

/** Renders a conversation into the exact prompt string the model sees. */
export interface ChatTemplate {
  readonly name: string;
  apply(messages: readonly ChatMessage[], options: ApplyOptions): string;
  /**
   * Set only when the template renders message by message, each message's text depending on that message alone:
   * `apply(ms, o)` is every message's `renderParts` joined, then `generationPrompt` when `o.addGenerationPrompt`. It
   * lets a conversation's prompt be rendered turn by turn, its new messages only (cache-model/prompt-ids.ts). With
   * `o.tools` the messages are withToolsTurn's (tokenizer/tools-prompt.ts): the tools' system turn comes first.
   */
  readonly incremental?: IncrementalRendering;
}

/** How a template renders message by message (see ChatTemplate.incremental). */
export interface IncrementalRendering {
  /**
   * The message's rendering as its parts, to be read as their concatenation: markup strings and the message's own
   * texts as they are, never joined, so that a 10 MB content is not copied into a rendering (issue #14).
   */
  renderParts(message: ChatMessage): readonly string[];
  readonly generationPrompt: string;
}

/** A tokenizer with the chat template that goes with it: what both the client and the simulator count with. */
export interface TokenCounter {
  readonly tokenizer: Tokenizer;
  readonly template: ChatTemplate;
  /** Where the tokenizer came from, for reports: `approx`, `tiktoken:cl100k_base`, a file path or a Hub model id. */
  readonly source?: string;
}
