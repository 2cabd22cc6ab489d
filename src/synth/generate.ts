import { formatCount } from '../conversation/size-bounds.js';
import type { Conversation, TurnSettings } from '../conversation/types.js';
import { ConfigError, isChatloadError } from '../errors/index.js';
import type { TokenCounter } from '../tokenizer/index.js';
import type { ChatMessage } from '../tokenizer/types.js';
import { BUILTIN_CORPUS } from './corpus.js';
import { sampleMany, type Distribution } from './distributions.js';
import type { GenerationConfig } from './generation-config.js';
import { Rng } from '../util/rng.js';
import { addSyntheticImages } from './synthetic-images.js';
import { addSyntheticAudio } from './synthetic-audio.js';
import { decodingTokenizer, realize, TokenStream, type Segment } from './token-stream.js';
import { readUtf8File, type Utf8ReadOptions } from '../util/utf8-text.js';
import { statInputFile } from '../util/input-file.js';

/** The instruction of every user message, as in the reference. */
export const BASE_PROMPT = 'Please rewrite the following text and add more content: ';

/** The per-turn header naming the conversation, as in the reference. */
export function conversationHeader(index: number): string {
  return `${index} is a nice number... `;
}

/** The random stream of the generator, derived from --seed (so generation never shifts the engine's streams). */
const GENERATOR_STREAM = 0x67656e;

/** What was asked of and what came out for one user turn (for tests, stats and the drift report). */
export interface TurnTokens {
  /** The sampled size: num_tokens, plus the conversation prefix on the first turn. */
  sampled: number;
  /** The size aimed at: `sampled`, or the fixed parts' size when they alone are larger. */
  target: number;
  /** The re-encoded size of the message. */
  actual: number;
}

/** A generated dataset and its token accounting. */
export interface GeneratedDataset {
  conversations: Conversation[];
  /** Per conversation, per user turn. */
  userTurns: TurnTokens[][];
  /** Per conversation, per answer: the re-encoded size of the recorded answer text. */
  answerTokens: number[][];
  /** Tokens of the shared system prompt / common prefix (0 when none). */
  commonPrefixTokens: number;
  /** Largest |actual - target| over all user turns (0 when every turn is exact). */
  maxDrift: number;
  /** Tokens in the corpus stream. */
  corpusTokens: number;
}

function toInt(x: number): number {
  return Math.round(x);
}

/** Largest text file a generation config may name (a JavaScript string holds ~512 MiB of text at most). */
const MAX_TEXT_FILE_BYTES = 256 * 1024 * 1024;

async function readCorpus(config: GenerationConfig, options: Utf8ReadOptions): Promise<string[]> {
  if (config.textFiles.length === 0) return [BUILTIN_CORPUS];
  return Promise.all(
    config.textFiles.map(async (file) => {
      try {
        // A device or a pipe (/dev/zero) would be read for ever: regular files only, and of a size a string can hold.
        const info = await statInputFile(file, (why, cause) => new ConfigError(`${file}: ${why}`, { cause }));
        if (info.size > MAX_TEXT_FILE_BYTES) throw new ConfigError(`${file} is ${info.size} bytes; expected at most ${MAX_TEXT_FILE_BYTES} (256 MiB)`);
        return await readUtf8File(file, options);
      } catch (error) {
        // Invalid UTF-8 already names the file and the byte.
        if (isChatloadError(error)) throw new ConfigError(`${config.file}: text_files: ${error.message}`, { cause: error });
        const code = (error as NodeJS.ErrnoException).code;
        throw new ConfigError(`${config.file}: text_files: cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`, { cause: error });
      }
    }),
  );
}

/**
 * Checks every sampled size against the config's bounds as generation samples them, before any text is made, and
 * adds them up: one message over `messageTokens`, or a dataset over `totalTokens`, is a ConfigError naming the field.
 */
class SizeCheck {
  readonly #config: GenerationConfig;
  #total = 0;

  constructor(config: GenerationConfig) {
    this.#config = config;
  }

  /** One message's size sampled from `field` (e.g. `prompt_input.num_tokens`), added to the dataset's total. */
  message(tokens: number, field: string, d: Distribution): number {
    const bound = this.#config.bounds.messageTokens;
    if (tokens > bound) {
      throw new ConfigError(`${this.#config.file}: ${field}: a sample of ${formatCount(tokens)} tokens from ${d.describe} is over the bound of ${formatCount(bound)} tokens per message; give the distribution a "max"`);
    }
    this.#total += tokens;
    const totalBound = this.#config.bounds.totalTokens;
    if (this.#total > totalBound) {
      throw new ConfigError(`${this.#config.file}: the dataset would hold more than ${formatCount(totalBound)} tokens (the bound of a generated dataset); generate fewer or shorter conversations`);
    }
    return tokens;
  }

  /** One conversation's message count, sampled from `prompt_input.num_turns`. */
  turns(count: number): number {
    const bound = this.#config.bounds.generatedTurns;
    if (count > bound) {
      throw new ConfigError(`${this.#config.file}: prompt_input.num_turns: a sample of ${formatCount(count)} messages from ${this.#config.numTurns.describe} is over the bound of ${formatCount(bound)} per conversation; give the distribution a "max"`);
    }
    return count;
  }
}

/** Options of generateConversations. */
export interface GenerateOptions extends Utf8ReadOptions {
  counter: TokenCounter;
  /** @default 0 */
  seed?: number;
}

/** The sampled sizes of one conversation's user turns. */
interface TurnPlan {
  inputs: number[];
  outputs: number[];
  thinks: number[] | undefined;
}

/** Every size of a dataset, sampled and checked against the bounds before any text is made. */
interface DatasetPlan {
  /** Messages per conversation (even: a user message and its answer per turn). */
  turnCounts: number[];
  /** Tokens of each conversation's own prefix (on its first user message). */
  prefixTokens: number[];
  /** Tokens of the prefix shared by every conversation's first message. */
  commonTokens: number;
  /** The system prompt text per conversation index (undefined when the config has none). */
  system: (c: number) => string | undefined;
  /** Per conversation, the sizes of its user turns. */
  turns: TurnPlan[];
}

/**
 * Generates the conversations of a `generate_conversations` config, as the reference builds them (REFERENCE.md
 * and docs/DATASETS.md), with exact token counts: each user message is realized by slicing corpus ids and
 * re-encoding until its count equals the sampled size. Deterministic for a seed, a config and a tokenizer.
 */
export async function generateConversations(config: GenerationConfig, options: GenerateOptions): Promise<GeneratedDataset> {
  const stream = new TokenStream(decodingTokenizer(options.counter.tokenizer), await readCorpus(config, options));
  const tokenizer = stream.tokenizer;
  const rng = Rng.derive(options.seed ?? 0, GENERATOR_STREAM);
  const count = (text: string): number => tokenizer.count(text);
  const baseCount = count(BASE_PROMPT);
  const plan = sampleDataset(config, stream, rng, baseCount);

  let offset = 0;
  let commonText = '';
  if (plan.commonTokens > 0) {
    // As the reference: the stream's first tokens, ending with "." to close the sentence.
    commonText = `${stream.text(0, Math.max(0, plan.commonTokens - 2))}.`;
    offset += plan.commonTokens;
  }
  const source: TextSource = { stream, count, baseCount, commonText, answer: answerCache(stream) };

  const conversations: Conversation[] = [];
  const userTurns: TurnTokens[][] = [];
  const answerTokens: number[][] = [];
  let maxDrift = 0;
  for (let c = 0; c < config.numConversations; c++) {
    const generated = generateConversation(source, plan, c, offset);
    // Past the conversation's own prefix and, as the reference, a little further on: the next conversation's text.
    offset += plan.prefixTokens[c]!;
    offset += plan.turnCounts[c]!;
    maxDrift = Math.max(maxDrift, generated.maxDrift);
    conversations.push(generated.conversation);
    userTurns.push(generated.turnTokens);
    answerTokens.push(generated.answers);
  }
  if (config.images !== undefined) addSyntheticImages(conversations, config.images, options.seed ?? 0);
  if (config.audio !== undefined) addSyntheticAudio(conversations, config.audio, options.seed ?? 0);
  return { conversations, userTurns, answerTokens, commonPrefixTokens: plan.commonTokens, maxDrift, corpusTokens: stream.length };
}

/**
 * Samples every size of the dataset from `rng` in the reference's order and checks each against the config's bounds
 * (a SizeCheck), so a config over the bounds fails before any text is made.
 */
function sampleDataset(config: GenerationConfig, stream: TokenStream, rng: Rng, baseCount: number): DatasetPlan {
  const n = config.numConversations;
  const sizes = new SizeCheck(config);
  // Sampling order follows the reference: turns and prefixes per conversation, then one common-prefix length. Every
  // size is sampled and checked before any text is realized, so a config over the bounds fails at once.
  const turnCounts = sampleMany(config.numTurns, rng, n).map((x) => {
    const t = Math.max(2, toInt(x));
    return sizes.turns(t + (t % 2));
  });
  const prefixTokens = sampleMany(config.prefixNumTokens, rng, n).map((x) => sizes.message(Math.max(0, toInt(x)), 'prompt_input.prefix_num_tokens', config.prefixNumTokens));
  const commonTokens = Math.max(0, toInt(sampleMany(config.commonPrefixNumTokens, rng, 1)[0] ?? 0));
  // The common prefix opens every conversation's first message.
  for (let c = 0; c < n; c++) sizes.message(commonTokens, 'prompt_input.common_prefix_num_tokens', config.commonPrefixNumTokens);
  const system = systemPrompts(config, stream, rng, n, sizes);
  const turns: TurnPlan[] = [];
  for (let c = 0; c < n; c++) {
    const userCount = turnCounts[c]! / 2;
    turns.push({
      inputs: sampleMany(config.numTokens, rng, userCount).map((x) => sizes.message(Math.max(toInt(x), baseCount), 'prompt_input.num_tokens', config.numTokens)),
      outputs: sampleMany(config.outputNumTokens, rng, userCount).map((x) => sizes.message(Math.max(toInt(x), 1), 'prompt_output.num_tokens', config.outputNumTokens)),
      thinks: config.thinkTime === undefined ? undefined : sampleMany(config.thinkTime, rng, userCount).map((x) => Math.max(0, x)),
    });
  }
  return { turnCounts, prefixTokens, commonTokens, system, turns };
}

/** A recorded answer: its text and re-encoded size. */
interface Answer {
  text: string;
  tokens: number;
}

/** What every conversation's text is made from. */
interface TextSource {
  stream: TokenStream;
  /** Tokens of a text under the run's tokenizer. */
  count: (text: string) => number;
  /** Tokens of BASE_PROMPT. */
  baseCount: number;
  /** The common prefix opening every conversation's first message ('' when none). */
  commonText: string;
  answer: (tokens: number) => Answer;
}

/** The recorded answer of a size, realized once per size and then reused. */
function answerCache(stream: TokenStream): (tokens: number) => Answer {
  const cache = new Map<number, Answer>();
  return (tokens) => {
    let hit = cache.get(tokens);
    if (hit === undefined) {
      // Answers come from the start of the stream, as in the reference: only their length matters (max_tokens).
      const r = realize(stream, [{ start: 0, count: tokens }], 0, tokens);
      hit = { text: r.text, tokens: r.tokens };
      cache.set(tokens, hit);
    }
    return hit;
  };
}

/** One generated conversation and its token accounting. */
interface GeneratedConversation {
  conversation: Conversation;
  turnTokens: TurnTokens[];
  answers: number[];
  /** Largest |actual - target| over its user turns. */
  maxDrift: number;
}

/**
 * Realizes conversation `c` of the plan: its system prompt, then each user turn and its recorded answer. Its text is
 * taken from the stream at `start`: its own prefix first, then each turn's filler.
 */
function generateConversation(source: TextSource, plan: DatasetPlan, c: number, start: number): GeneratedConversation {
  const userCount = plan.turnCounts[c]! / 2;
  const { inputs, outputs, thinks } = plan.turns[c]!;
  const largest = Math.max(...inputs);
  const header = conversationHeader(c);
  const messages: ChatMessage[] = [];
  const turns: TurnSettings[] = [];
  const turnTokens: TurnTokens[] = [];
  const answers: number[] = [];
  let maxDrift = 0;
  const systemText = plan.system(c);
  if (systemText !== undefined) messages.push({ role: 'system', content: systemText });
  const prefix = plan.prefixTokens[c]!;
  const fillerStart = start + prefix;
  for (let t = 0; t < userCount; t++) {
    const head = t === 0 ? source.commonText + header : header;
    const ownPrefix = t === 0 && prefix > 0 ? { c, start, tokens: prefix } : undefined;
    const user = userMessage(source, head, inputs[t]!, ownPrefix, fillerStart + t * largest);
    maxDrift = Math.max(maxDrift, Math.abs(user.drift));
    messages.push({ role: 'user', content: user.text });
    turnTokens.push(user.tokens);
    const a = source.answer(outputs[t]!);
    messages.push({ role: 'assistant', content: a.text });
    answers.push(a.tokens);
    const settings: TurnSettings = { maxTokens: outputs[t]! };
    if (thinks !== undefined && t > 0) settings.thinkTimeSec = thinks[t]!;
    turns.push(settings);
  }
  return { conversation: { id: `CONV_ID_${c}`, messages, turns }, turnTokens, answers, maxDrift };
}

/** A conversation's own prefix: conversation `c`'s `tokens` tokens of the stream from `start`. */
interface OwnPrefix {
  c: number;
  start: number;
  tokens: number;
}

/**
 * Realizes one user message: `head`, the conversation's own prefix (on its first turn), BASE_PROMPT and corpus filler
 * from `fillerStart`, re-encoded until its size is `inputTokens` (plus the prefix) or the fixed parts' size if larger.
 */
function userMessage(source: TextSource, head: string, inputTokens: number, prefix: OwnPrefix | undefined, fillerStart: number): { text: string; drift: number; tokens: TurnTokens } {
  const segments: Segment[] = [{ text: head }];
  let sampled = inputTokens;
  let fixed = source.count(head) + source.baseCount;
  let prefixSlice = -1;
  if (prefix !== undefined) {
    // The conversation's own prefix comes on top of num_tokens; its "{i}, " marker is part of it.
    const marker = `${prefix.c}, `;
    const markerTokens = source.count(marker);
    segments.push({ text: marker });
    prefixSlice = segments.length;
    segments.push({ start: prefix.start, count: Math.max(0, prefix.tokens - markerTokens) });
    sampled += prefix.tokens;
    fixed += prefix.tokens;
  }
  segments.push({ text: BASE_PROMPT });
  const fillerCount = sampled - fixed;
  segments.push({ start: fillerStart, count: Math.max(0, fillerCount) });
  const target = Math.max(sampled, fixed);
  // Adjust the filler; when there is none (the fixed parts fill the turn), adjust the prefix instead.
  const adjust = fillerCount > 0 || prefixSlice === -1 ? segments.length - 1 : prefixSlice;
  const r = realize(source.stream, segments, adjust, target);
  return { text: r.text, drift: r.drift, tokens: { sampled, target, actual: r.tokens } };
}

/** The system prompt text per conversation index (undefined when the config has none). Sizes are sampled and checked at once. */
function systemPrompts(config: GenerationConfig, stream: TokenStream, rng: Rng, n: number, check: SizeCheck): (c: number) => string | undefined {
  const spec = config.systemPrompt;
  if (spec === undefined) return () => undefined;
  if (spec.kind === 'text') return () => spec.text;
  const tokens = (d: Distribution, k: number): number[] => sampleMany(d, rng, k).map((x) => check.message(Math.max(1, toInt(x)), 'system_prompt.num_tokens', d));
  // System prompt text is taken from the far side of the stream so it does not repeat the common prefix.
  const from = Math.floor(stream.length / 2);
  if (spec.shared) {
    const size = tokens(spec.numTokens, 1)[0]!;
    // It is in every conversation's messages.
    for (let c = 1; c < n; c++) check.message(size, 'system_prompt.num_tokens', spec.numTokens);
    const text = realize(stream, [{ start: from, count: size }], 0, size).text;
    return () => text;
  }
  const sizes = tokens(spec.numTokens, n);
  return (c) => realize(stream, [{ start: from + c * 7919, count: sizes[c]! }], 0, sizes[c]!).text;
}
