import * as z from 'zod';
import { ConfigError } from '../errors/index.js';

/**
 * The simulated engine's parameters. Names follow vLLM's engine arguments where one exists (snake_case, as in
 * `--config sim.json`). Times are milliseconds. See docs/SIMULATOR.md for the step-time equation.
 */
export interface SimConfig {
  /** Longest prompt + completion a request may ask for, in tokens (vLLM `--max-model-len`). */
  max_model_len: number;
  /** Most requests running (prefilling or decoding) at once (vLLM `--max-num-seqs`). */
  max_num_seqs: number;
  /** Token budget of one engine step, decode tokens and prefill chunks together (vLLM `--max-num-batched-tokens`). */
  max_num_batched_tokens: number;
  /** KV cache size in blocks of `block_size` tokens. */
  num_gpu_blocks: number;
  /** Tokens per KV block (vLLM's default is 16). */
  block_size: number;
  /** Whether full blocks are kept and reused across requests (vLLM `--enable-prefix-caching`, on by default in v1). */
  enable_prefix_caching: boolean;
  /**
   * Whose prefix-cache semantics (issue #30, docs/ENGINES.md): `vllm`, a prompt's blocks shared from the step that
   * computes them, with the requests admitted after it in that step too; `sglang`, once that step is done, so requests
   * prefilled in one batch do not hit each other (SGLang's radix tree takes a prompt after its prefill step);
   * `llamacpp`, token granular (block_size 1: set it) and a request's tokens shared only once it ends, its last
   * sampled token never (an answer cut at its length keeps all but its last token; one that stopped, all of it), as
   * llama-server's slots and host-memory prompt cache give. The expected-cache model reads it from /metrics
   * (`chatload_sim_cache_semantics_info`).
   */
  cache_semantics: 'vllm' | 'sglang' | 'llamacpp';
  /** Requests allowed to wait for admission; beyond it, 503 at once. Null = unbounded. */
  max_waiting: number | null;
  /** Output budget when a request sends no max_tokens (also capped by max_model_len - prompt). */
  default_max_tokens: number;
  /** Fixed cost of every step (weights read, launch overhead), ms. */
  step_base_ms: number;
  /** Cost per prefill token computed in the step, ms. */
  prefill_ms_per_token: number;
  /** Cost per decoding sequence in the step, ms. */
  decode_ms_per_seq: number;
  /** Cost per context token attended to by the step's decoding sequences (KV read), ms. */
  attention_ms_per_token: number;
  /**
   * The end-of-sequence model. Null: every request runs to its output budget (finish_reason `length`).
   * Uniform: each request samples an EOS length in [min, max] (seeded); it ends there with `stop` if that is
   * before its budget. `ignore_eos` disables it; `min_tokens` raises the sampled length to at least min_tokens.
   */
  eos: null | { distribution: 'uniform'; min: number; max: number };
  /**
   * Share of chat requests carrying `tools` that are answered with a tool call (0-1, seeded): the generated tokens
   * stream as the call's `function.arguments` in OpenAI's delta format, with finish_reason `tool_calls`.
   */
  tool_call_rate: number;
  /** Prompt tokens one image part stands for (LLaVA-1.5's 576 = 24x24 patches); each image's ids hash its URL. */
  tokens_per_image: number;
  /**
   * Prompt tokens one second of an audio part stands for (its duration read from its WAV or MP3 header; rounded up).
   * 25: Qwen2-Audio's encoder gives one frame per 40 ms (docs/SIMULATOR.md); each audio's ids hash its data.
   */
  tokens_per_audio_second: number;
  /** Responses kept for `previous_response_id` (least recently used dropped first); 0 keeps none. */
  responses_store_size: number;
}

const positiveInt = z.number().int().positive();
const nonNegative = z.number().nonnegative();

/** Zod schema of a full SimConfig; `.partial().strict()` of it validates overrides. */
const simConfigSchema = z.object({
  max_model_len: positiveInt,
  max_num_seqs: positiveInt,
  max_num_batched_tokens: positiveInt,
  // The simulator holds arrays of its blocks: a bound it can allocate (issue #35: 1e12 crashed it).
  num_gpu_blocks: positiveInt.max(2 ** 26, 'expected at most 67108864 blocks (a billion tokens of KV at 16 a block)'),
  block_size: positiveInt,
  enable_prefix_caching: z.boolean(),
  cache_semantics: z.enum(['vllm', 'sglang', 'llamacpp']),
  max_waiting: z.number().int().nonnegative().nullable(),
  default_max_tokens: positiveInt,
  step_base_ms: nonNegative,
  prefill_ms_per_token: nonNegative,
  decode_ms_per_seq: nonNegative,
  attention_ms_per_token: nonNegative,
  eos: z
    .object({ distribution: z.literal('uniform'), min: z.number().int().positive(), max: z.number().int().positive() })
    .strict()
    .refine((e) => e.min <= e.max, { message: 'eos.min must be <= eos.max' })
    .nullable(),
  tool_call_rate: z.number().min(0).max(1),
  tokens_per_image: z.number().int().nonnegative(),
  tokens_per_audio_second: z.number().nonnegative().max(100_000),
  responses_store_size: z.number().int().nonnegative(),
});

const h100Base: SimConfig = {
  max_model_len: 32768,
  max_num_seqs: 256,
  max_num_batched_tokens: 8192,
  // ~400k tokens of KV: what an 8B model with fp16 KV (128 KiB per token) leaves free on an 80 GB GPU at 0.9 utilisation.
  num_gpu_blocks: 25000,
  block_size: 16,
  enable_prefix_caching: true,
  cache_semantics: 'vllm',
  max_waiting: null,
  default_max_tokens: 1024,
  // 16 GB of weights read at ~3 TB/s per step, plus scheduling overhead.
  step_base_ms: 6,
  // ~16k prefill tokens/s.
  prefill_ms_per_token: 0.06,
  decode_ms_per_seq: 0.03,
  // 128 KiB of KV per context token read at ~3 TB/s.
  attention_ms_per_token: 0.00004,
  eos: null,
  tool_call_rate: 0.8,
  tokens_per_image: 576,
  tokens_per_audio_second: 25,
  responses_store_size: 10_000,
};

/**
 * The built-in profiles, by name. `cpu-tiny` is fast and small for tests; `h100-8b` models an 8B model on one
 * H100-class GPU; `agentic` is h100-8b with a 256k context; `demo` (what `chatload run` uses without --url) has h100-8b's parameters: a 16-client demo of ~400
 * requests takes ~20-40 s.
 */
export const profiles: Readonly<Record<string, Readonly<SimConfig>>> = Object.freeze({
  'cpu-tiny': Object.freeze({
    max_model_len: 8192,
    max_num_seqs: 64,
    max_num_batched_tokens: 2048,
    num_gpu_blocks: 4096,
    block_size: 16,
    enable_prefix_caching: true,
    cache_semantics: 'vllm',
    max_waiting: null,
    default_max_tokens: 128,
    step_base_ms: 1,
    prefill_ms_per_token: 0.0005,
    decode_ms_per_seq: 0.01,
    attention_ms_per_token: 0.000002,
    eos: null,
    tool_call_rate: 0.8,
    tokens_per_image: 576,
    tokens_per_audio_second: 25,
    responses_store_size: 10_000,
  }),
  'h100-8b': Object.freeze({ ...h100Base }),
  // An alias of h100-8b: 16 clients x 25 turns of the reference's generated conversations (1.6k-token first turn,
  // ~140-token user turns, 100-token answers) take ~28 s of simulated engine time.
  demo: Object.freeze({ ...h100Base }),
  // h100-8b with a 256k-token context and twice the KV cache (a long-context deployment, as Qwen3's 256k models), for
  // agentic sessions whose histories grow past 100k tokens (docs/SIMULATOR.md, "Agentic demo").
  agentic: Object.freeze({ ...h100Base, max_model_len: 262144, num_gpu_blocks: 50000 }),
});

/** The profile the library API uses when none is named. */
export const DEFAULT_PROFILE = 'cpu-tiny';

function formatIssue(issue: z.core.$ZodIssue, prefix: string): string {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') return `${prefix}unknown key(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  return `${prefix}'${path}': ${issue.message}`;
}

/**
 * Validates overrides (a parsed `--config` file or the API's `config`) and returns them typed.
 * Throws ConfigError naming every bad key; `source` (e.g. the file name) prefixes the message.
 */
export function parseSimConfigOverrides(value: unknown, source = 'simulator config'): Partial<SimConfig> {
  const result = simConfigSchema.partial().strict().safeParse(value);
  if (!result.success) {
    const problems = result.error.issues.map((i) => formatIssue(i, '')).join('; ');
    // The known keys help only where a key was not one.
    const unknownKey = result.error.issues.some((i) => i.code === 'unrecognized_keys');
    throw new ConfigError(`${source}: ${problems}`, unknownKey ? { hint: `known keys: ${Object.keys(h100Base).join(', ')}` } : {});
  }
  return result.data as Partial<SimConfig>;
}

/** The profile named `name` with `overrides` applied and checked. Unknown profile -> ConfigError listing the names. */
export function resolveSimConfig(name: string, overrides: unknown = {}, source?: string): SimConfig {
  const base = Object.hasOwn(profiles, name) ? profiles[name] : undefined;
  if (base === undefined) {
    throw new ConfigError(`unknown simulator profile '${name}'; known profiles: ${Object.keys(profiles).join(', ')}`);
  }
  const given = parseSimConfigOverrides(overrides ?? {}, source);
  const config = { ...base, ...given };
  if (config.cache_semantics === 'llamacpp' && config.block_size !== 1) {
    if (given.block_size !== undefined) throw new ConfigError(`${source === undefined ? '' : `${source}: `}'block_size': cache_semantics llamacpp caches token by token: expected 1`);
    // Token by token, with the profile's KV capacity in tokens.
    return { ...config, block_size: 1, num_gpu_blocks: (given.num_gpu_blocks ?? base.num_gpu_blocks) * (given.num_gpu_blocks === undefined ? base.block_size : 1) };
  }
  return config;
}
