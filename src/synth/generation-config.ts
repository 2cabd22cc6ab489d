import { isAbsolute, resolve } from 'node:path';
import { formatCount, sizeBounds, type SizeBounds } from '../conversation/size-bounds.js';
import { ConfigError } from '../errors/index.js';
import { parseDistribution, type Distribution } from './distributions.js';
import type { ImageSpec } from './synthetic-images.js';
import type { AudioSpec } from './synthetic-audio.js';
import { shownValue } from '../errors/shown-value.js';

/** A system prompt of a generation config: literal text, or corpus text of a sampled token length. */
export type SystemPromptSpec =
  | { kind: 'text'; text: string }
  | { kind: 'generated'; numTokens: Distribution; shared: boolean };

/**
 * The reference's `generate_conversations` config, validated (see docs/DATASETS.md), plus chatload's extensions:
 * `system_prompt`, `think_time` and a built-in corpus when `text_files` is omitted.
 */
export interface GenerationConfig {
  /** The config file, as given (errors found while generating name it). */
  file: string;
  /** The size bounds it was checked against; generation checks every sample against them too. */
  bounds: Readonly<SizeBounds>;
  numConversations: number;
  /** Absolute paths (resolved against the config file's folder); empty means the built-in corpus. */
  textFiles: string[];
  printStats: boolean;
  /** Messages per conversation, user and assistant together (raised to >= 2 and rounded up to even). */
  numTurns: Distribution;
  /** Tokens of each user message (common prefix, header and instruction included). */
  numTokens: Distribution;
  /** Tokens of the per-conversation prefix added to the first user message, on top of numTokens. */
  prefixNumTokens: Distribution;
  /** Tokens of the prefix shared by every conversation's first message (sampled once). */
  commonPrefixNumTokens: Distribution;
  /** Tokens of each answer: the turn's `max_tokens`. */
  outputNumTokens: Distribution;
  /** Seconds before each user turn after the first (extension). */
  thinkTime: Distribution | undefined;
  systemPrompt: SystemPromptSpec | undefined;
  /** Synthetic PNG images in the user messages (extension); undefined for none. */
  images: ImageSpec | undefined;
  /** Synthetic WAV tones in the user messages (extension); undefined for none. */
  audio: AudioSpec | undefined;
}

/** Largest side of a synthetic image (pixels), and most images in one message. */
const MAX_IMAGE_SIDE = 4096;
const MAX_IMAGES_PER_MESSAGE = 64;

/**
 * The `images` extension: `{"num_images": N or DISTRIBUTION (default 1), "width": W, "height": H (default 336),
 * "turns": "first" | "all" (default "first")}`. ConfigError naming the key otherwise.
 */
function parseImageSpec(value: unknown, at: (key: string) => string, limits: Readonly<SizeBounds>): ImageSpec {
  const o = object(value, at('images'));
  const side = (key: 'width' | 'height'): number => {
    const v = o[key] ?? 336;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_IMAGE_SIDE) throw new ConfigError(`${at(`images.${key}`)}: expected an integer from 1 to ${MAX_IMAGE_SIDE}, got ${shownValue(v)}`);
    return v;
  };
  const width = side('width');
  const height = side('height');
  // A PNG is at most its raw pixels plus a little; base64 takes 4 characters per 3 bytes.
  const worstChars = Math.ceil((width * height * 3 + height + 1024) / 3) * 4;
  if (worstChars > limits.imageUrlChars) throw new ConfigError(`${at('images')}: ${width}x${height} images may be over the bound of ${formatCount(limits.imageUrlChars)} data URL characters`);
  const raw = o.num_images ?? 1;
  const where = at('images.num_images');
  const numImages = typeof raw === 'number' ? parseDistribution({ distribution: 'constant', value: raw }, where) : parseDistribution(raw, where);
  const [low, high] = numImages.range;
  if (low < 0 || high > MAX_IMAGES_PER_MESSAGE) throw new ConfigError(`${where}: ${numImages.describe} must stay within 0 to ${MAX_IMAGES_PER_MESSAGE} images per message`);
  const turns = o.turns ?? 'first';
  if (turns !== 'first' && turns !== 'all') throw new ConfigError(`${at('images.turns')}: expected "first" or "all", got ${JSON.stringify(turns)}`);
  return { numImages, width, height, turns };
}

/** Most audio parts in one message, and the sample rates a synthetic tone may have (Hz). */
const MAX_AUDIOS_PER_MESSAGE = 64;
const MIN_SAMPLE_RATE = 8000;
const MAX_SAMPLE_RATE = 48000;

/**
 * The `audio` extension: `{"num_audios": N or DISTRIBUTION (default 1), "duration_sec": SECONDS or DISTRIBUTION
 * (default 5), "sample_rate": HZ (default 16000), "turns": "first" | "all" (default "first")}`. A duration must stay
 * within what one audio part may hold (audioDataChars): an unbounded distribution needs its "max". ConfigError naming
 * the key otherwise.
 */
function parseAudioSpec(value: unknown, at: (key: string) => string, limits: Readonly<SizeBounds>): AudioSpec {
  const o = object(value, at('audio'));
  const distribution = (key: string, fallback: number): Distribution => {
    const raw = o[key] ?? fallback;
    const where = at(`audio.${key}`);
    return typeof raw === 'number' ? parseDistribution({ distribution: 'constant', value: raw }, where) : parseDistribution(raw, where);
  };
  const sampleRate = o.sample_rate ?? 16000;
  if (typeof sampleRate !== 'number' || !Number.isInteger(sampleRate) || sampleRate < MIN_SAMPLE_RATE || sampleRate > MAX_SAMPLE_RATE) {
    throw new ConfigError(`${at('audio.sample_rate')}: expected an integer from ${MIN_SAMPLE_RATE} to ${MAX_SAMPLE_RATE} (Hz), got ${shownValue(sampleRate)}`);
  }
  const numAudios = distribution('num_audios', 1);
  if (numAudios.range[0] < 0 || numAudios.range[1] > MAX_AUDIOS_PER_MESSAGE) throw new ConfigError(`${at('audio.num_audios')}: ${numAudios.describe} must stay within 0 to ${MAX_AUDIOS_PER_MESSAGE} audio parts per message`);
  const durationSec = distribution('duration_sec', 5);
  // 16-bit mono PCM and its 44-byte header, in base64's 4 characters per 3 bytes.
  const maxSec = Math.floor(((limits.audioDataChars / 4) * 3 - 44) / (sampleRate * 2));
  const [low, high] = durationSec.range;
  if (low < 0 || high > maxSec) throw new ConfigError(`${at('audio.duration_sec')}: ${durationSec.describe} must stay within 0 to ${formatCount(maxSec)} seconds at ${formatCount(sampleRate)} Hz (the bound of ${formatCount(limits.audioDataChars)} base64 characters per audio part)`);
  const turns = o.turns ?? 'first';
  if (turns !== 'first' && turns !== 'all') throw new ConfigError(`${at('audio.turns')}: expected "first" or "all", got ${JSON.stringify(turns)}`);
  return { numAudios, durationSec, sampleRate, turns };
}

/** True when `value` is a generation config (`"filetype": "generate_conversations"`). */
export function isGenerationConfig(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as Record<string, unknown>).filetype === 'generate_conversations';
}

function object(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError(`${where}: expected an object`);
  return value as Record<string, unknown>;
}

const ZERO = parseDistribution({ distribution: 'constant', value: 0 }, 'default');

/** The size fields of a config, in the order they are checked, and the bound of each. */
type SizeField = 'turns' | 'tokens';

/**
 * Checks that a size distribution can give neither a negative value (issue #16: -50 was accepted) nor one over its
 * bound (1e12 crashed V8). An unbounded distribution (lognormal without "max", ...) passes here; generation then
 * checks every sample.
 */
function checkSize(d: Distribution, where: string, field: SizeField, bounds: Readonly<SizeBounds>): Distribution {
  const [low, high] = d.range;
  if (low < 0) throw new ConfigError(`${where}: ${d.describe} can be negative; expected sizes >= 0`);
  const bound = field === 'turns' ? bounds.generatedTurns : bounds.messageTokens;
  if (Number.isFinite(high) && high > bound) {
    const unit = field === 'turns' ? 'messages per conversation' : 'tokens per message';
    throw new ConfigError(`${where}: ${d.describe} goes over the bound of ${formatCount(bound)} ${unit}`);
  }
  return d;
}

/**
 * Validates a parsed generation config from `file` (relative `text_files` resolve against `baseDir`). Every problem
 * is a ConfigError naming the file and the key, e.g. `gen.json: prompt_input.num_tokens: "max" is required ...`.
 * Sizes are checked against `bounds` (default SIZE_BOUNDS, docs/DATASETS.md).
 */
export function parseGenerationConfig(value: unknown, file: string, baseDir: string, bounds?: Partial<SizeBounds>): GenerationConfig {
  const limits = sizeBounds(bounds);
  const root = object(value, file);
  const at = (key: string): string => `${file}: ${key}`;
  const n = root.num_conversations;
  if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) {
    throw new ConfigError(`${at('num_conversations')}: expected an integer > 0, got ${shownValue(n)}`);
  }
  if (n > limits.generatedConversations) {
    throw new ConfigError(`${at('num_conversations')}: ${formatCount(n)} is over the bound of ${formatCount(limits.generatedConversations)} generated conversations`);
  }
  let textFiles: string[] = [];
  if (root.text_files !== undefined) {
    if (!Array.isArray(root.text_files) || root.text_files.some((f) => typeof f !== 'string' || f === '')) {
      throw new ConfigError(`${at('text_files')}: expected a list of file paths`);
    }
    textFiles = (root.text_files as string[]).map((f) => (isAbsolute(f) ? f : resolve(baseDir, f)));
  }
  const input = object(root.prompt_input, at('prompt_input'));
  const output = object(root.prompt_output, at('prompt_output'));
  const dist = (obj: Record<string, unknown>, key: string, prefix: string, field: SizeField = 'tokens'): Distribution => {
    const where = at(`${prefix}.${key}`);
    if (obj[key] === undefined) throw new ConfigError(`${where}: missing (expected a distribution object)`);
    return checkSize(parseDistribution(obj[key], where), where, field, limits);
  };
  let systemPrompt: SystemPromptSpec | undefined;
  const sp = root.system_prompt;
  if (typeof sp === 'string') systemPrompt = { kind: 'text', text: sp };
  else if (sp !== undefined && sp !== null) {
    const o = object(sp, at('system_prompt'));
    if (typeof o.text === 'string') systemPrompt = { kind: 'text', text: o.text };
    else if (o.num_tokens !== undefined) {
      if (o.shared !== undefined && typeof o.shared !== 'boolean') throw new ConfigError(`${at('system_prompt.shared')}: expected true or false`);
      systemPrompt = { kind: 'generated', numTokens: dist(o, 'num_tokens', 'system_prompt'), shared: o.shared !== false };
    } else throw new ConfigError(`${at('system_prompt')}: expected a string, {"text": ...} or {"num_tokens": DISTRIBUTION, "shared": true|false}`);
  }
  if (systemPrompt?.kind === 'text' && systemPrompt.text.length > limits.messageChars) {
    throw new ConfigError(`${at('system_prompt')}: ${formatCount(systemPrompt.text.length)} characters, over the bound of ${formatCount(limits.messageChars)} per message`);
  }
  return {
    file,
    bounds: limits,
    numConversations: n,
    textFiles,
    printStats: root.print_stats === true,
    numTurns: dist(input, 'num_turns', 'prompt_input', 'turns'),
    numTokens: dist(input, 'num_tokens', 'prompt_input'),
    prefixNumTokens: input.prefix_num_tokens === undefined ? ZERO : dist(input, 'prefix_num_tokens', 'prompt_input'),
    commonPrefixNumTokens: input.common_prefix_num_tokens === undefined ? ZERO : dist(input, 'common_prefix_num_tokens', 'prompt_input'),
    outputNumTokens: dist(output, 'num_tokens', 'prompt_output'),
    thinkTime: root.think_time === undefined ? undefined : parseDistribution(root.think_time, at('think_time')),
    systemPrompt,
    images: root.images === undefined ? undefined : parseImageSpec(root.images, at, limits),
    audio: root.audio === undefined ? undefined : parseAudioSpec(root.audio, at, limits),
  };
}
