/**
 * The largest inputs chatload accepts (issue #16: `num_tokens` 1e12 crashed V8 with "invalid size error", 1e8 ran for
 * minutes, -50 was accepted). Each bound is generous for a benchmark and keeps memory to about 1-2 GB; going past
 * one is a one-line error naming the file, the field and the bound. docs/DATASETS.md lists them.
 */
export interface SizeBounds {
  /** Conversations of a generation config (`num_conversations`). */
  generatedConversations: number;
  /** Messages (user and assistant together) of one generated conversation: a `num_turns` sample. */
  generatedTurns: number;
  /**
   * Tokens of one generated message: each value of `num_tokens`, `prefix_num_tokens`, `common_prefix_num_tokens`,
   * `system_prompt.num_tokens` and `prompt_output.num_tokens` (an answer's max_tokens).
   */
  messageTokens: number;
  /** Tokens of a whole generated dataset: every user message, answer and system prompt of every conversation. */
  totalTokens: number;
  /** Conversations (or ShareGPT items) of a loaded dataset. */
  loadedConversations: number;
  /** Characters (UTF-16 code units) of one message of a loaded dataset (ShareGPT: after merging a speaker's run). */
  messageChars: number;
  /** Characters of one JSONL line or one element of a streamed JSON list: one conversation's text. */
  itemChars: number;
  /** Characters of a streamed dataset file (JSONL, or a JSON list over 64 MB): all conversations are held in memory. */
  totalChars: number;
  /** Characters of one image's data URL (about 24 MB of image: 32 Mi base64 characters). */
  imageUrlChars: number;
  /** Base64 characters of one audio part's data (about 24 MB of audio, 13 minutes of 16 kHz 16-bit mono WAV). */
  audioDataChars: number;
}

/**
 * The longest wait a dataset may ask for (a trace's clock, a turn's think_time_sec): a year, in seconds, as every
 * chatload wait (options/define.ts's MAX_SECONDS; conversation/ may not import options/). Past it a value is a slip
 * (ms for s), not a schedule (issue #35: a trace timestamp of 1e300 was sent at once).
 */
export const MAX_WAIT_SEC = 365 * 24 * 3600;

/** The bounds, as documented in docs/DATASETS.md. */
export const SIZE_BOUNDS: Readonly<SizeBounds> = Object.freeze({
  generatedConversations: 1_000_000,
  generatedTurns: 100_000,
  messageTokens: 2_000_000,
  totalTokens: 100_000_000,
  loadedConversations: 10_000_000,
  messageChars: 16_000_000,
  itemChars: 256 * 1024 * 1024,
  totalChars: 1_000_000_000,
  imageUrlChars: 32 * 1024 * 1024,
  audioDataChars: 32 * 1024 * 1024,
});

/** `bounds` over the defaults (tests and small machines pass tighter ones). */
export function sizeBounds(bounds: Partial<SizeBounds> | undefined): Readonly<SizeBounds> {
  return bounds === undefined ? SIZE_BOUNDS : { ...SIZE_BOUNDS, ...bounds };
}

/** A count as the messages print it: `2,000,000`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
