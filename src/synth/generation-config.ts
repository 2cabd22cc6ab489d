import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from '../errors/index.js';
import { parseDistribution, type Distribution } from './distributions.js';

/** A system prompt of a generation config: literal text, or corpus text of a sampled token length. */
export type SystemPromptSpec =
  | { kind: 'text'; text: string }
  | { kind: 'generated'; numTokens: Distribution; shared: boolean };

/**
 * The reference's `generate_conversations` config, validated (see docs/DATASETS.md), plus chatload's extensions:
 * `system_prompt`, `think_time` and a built-in corpus when `text_files` is omitted.
 */
export interface GenerationConfig {
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

/**
 * Validates a parsed generation config from `file` (relative `text_files` resolve against `baseDir`). Every problem
 * is a ConfigError naming the file and the key, e.g. `gen.json: prompt_input.num_tokens: "max" is required ...`.
 */
export function parseGenerationConfig(value: unknown, file: string, baseDir: string): GenerationConfig {
  const root = object(value, file);
  const at = (key: string): string => `${file}: ${key}`;
  const n = root.num_conversations;
  if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) {
    throw new ConfigError(`${at('num_conversations')}: expected an integer > 0, got ${JSON.stringify(n) ?? 'nothing'}`);
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
  const dist = (obj: Record<string, unknown>, key: string, prefix: string): Distribution => {
    if (obj[key] === undefined) throw new ConfigError(`${at(`${prefix}.${key}`)}: missing (expected a distribution object)`);
    return parseDistribution(obj[key], at(`${prefix}.${key}`));
  };
  let systemPrompt: SystemPromptSpec | undefined;
  const sp = root.system_prompt;
  if (typeof sp === 'string') systemPrompt = { kind: 'text', text: sp };
  else if (sp !== undefined && sp !== null) {
    const o = object(sp, at('system_prompt'));
    if (typeof o.text === 'string') systemPrompt = { kind: 'text', text: o.text };
    else if (o.num_tokens !== undefined) {
      if (o.shared !== undefined && typeof o.shared !== 'boolean') throw new ConfigError(`${at('system_prompt.shared')}: expected true or false`);
      systemPrompt = { kind: 'generated', numTokens: parseDistribution(o.num_tokens, at('system_prompt.num_tokens')), shared: o.shared !== false };
    } else throw new ConfigError(`${at('system_prompt')}: expected a string, {"text": ...} or {"num_tokens": DISTRIBUTION, "shared": true|false}`);
  }
  return {
    numConversations: n,
    textFiles,
    printStats: root.print_stats === true,
    numTurns: dist(input, 'num_turns', 'prompt_input'),
    numTokens: dist(input, 'num_tokens', 'prompt_input'),
    prefixNumTokens: input.prefix_num_tokens === undefined ? ZERO : dist(input, 'prefix_num_tokens', 'prompt_input'),
    commonPrefixNumTokens: input.common_prefix_num_tokens === undefined ? ZERO : dist(input, 'common_prefix_num_tokens', 'prompt_input'),
    outputNumTokens: dist(output, 'num_tokens', 'prompt_output'),
    thinkTime: root.think_time === undefined ? undefined : parseDistribution(root.think_time, at('think_time')),
    systemPrompt,
  };
}
