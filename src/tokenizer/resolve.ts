import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ConfigError } from '../errors/index.js';
import { approxTokenizer } from './approx.js';
import type { HfTokenizer as HfTokenizerType } from './hf.js';
import { chatmlTemplate } from './chatml.js';
import { downloadTokenizer, findCachedSnapshot, hubSettingsFromEnv, looksLikeRepoId, splitRevision } from './hub.js';
import type { TokenCounter } from './types.js';
import { TIKTOKEN_ENCODINGS, TiktokenTokenizer, type TiktokenEncodingName } from './tiktoken.js';

/** What decides the tokenizer: `--tokenizer`, else the tokenizer of `-m/--model`. */
export interface TokenizerSpec {
  /** `approx`, `tiktoken:cl100k_base|o200k_base`, a tokenizer.json or model folder path, or a Hub model id (`owner/name[@revision]`). */
  tokenizer?: string;
  /** The model name (`-m`): its tokenizer is used when it resolves from a local folder or the HF cache (never downloaded). */
  model?: string;
  /** Accepted for compatibility with the reference; chatload never runs remote code, so it changes nothing. */
  trustRemoteCode?: boolean;
  /** Receives one-line warnings (approximate counts, no chat template, offline fallbacks). */
  warn?: (message: string) => void;
  /** The environment to read HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE and the cache location from. @default process.env */
  env?: NodeJS.ProcessEnv;
}

const APPROX_NOTE = 'about ±25% from a real BPE tokenizer';

/** Loaded tokenizers by real path: a tokenizer.json can be 10 MB, and run, serve and the generator may ask for the same one. */
const loaded = new Map<string, Promise<TokenCounter>>();

async function statOrNull(path: string): Promise<Awaited<ReturnType<typeof stat>> | null> {
  try {
    return await stat(path);
  } catch {
    return null;
  }
}

async function readJson(path: string, label: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${label}: cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${label}: ${path} is not valid JSON: ${(error as Error).message.split('\n')[0]}`, { cause: error });
  }
}

async function readOptionalJson(path: string, label: string): Promise<Record<string, unknown> | undefined> {
  if ((await statOrNull(path))?.isFile() !== true) return undefined;
  const value = await readJson(path, label);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * Loads a tokenizer from a `tokenizer.json` file or a folder holding one, with `tokenizer_config.json` beside it
 * (special tokens and `chat_template`; a `chat_template.jinja` or `chat_template.json` file also counts). Without a
 * template it counts prompts with ChatML and warns.
 */
export async function loadTokenizerPath(path: string, label: string, warn: (message: string) => void = () => {}): Promise<TokenCounter> {
  const info = await statOrNull(path);
  if (info === null) throw new ConfigError(`${label}: no such file or folder: ${path}`);
  const file = info.isDirectory() ? join(path, 'tokenizer.json') : path;
  if ((await statOrNull(file))?.isFile() !== true) {
    throw new ConfigError(`${label}: ${path} has no tokenizer.json (expected a tokenizer.json file or a model folder holding one)`);
  }
  const key = await realpath(file);
  let pending = loaded.get(key);
  if (pending === undefined) {
    pending = loadFiles(file, label);
    loaded.set(key, pending);
    pending.catch(() => loaded.delete(key));
  }
  const counter = await pending;
  if (counter.template === chatmlTemplate) warn(`${label}: ${dirname(file)} has no chat template; counting prompts with ChatML, which may differ from the server's count`);
  return counter;
}

async function loadFiles(file: string, label: string): Promise<TokenCounter> {
  // Loaded only for a tokenizer.json: @huggingface/tokenizers and @huggingface/jinja are not needed by the
  // approximate tokenizer or tiktoken, and cost every start their load (issue 17).
  const [{ HfTokenizer }, { chatTemplateSource, jinjaChatTemplate, tokenText }] = await Promise.all([import('./hf.js'), import('./jinja-template.js')]);
  const dir = dirname(file);
  const json = await readJson(file, label);
  if (typeof json !== 'object' || json === null || typeof (json as { model?: unknown }).model !== 'object') {
    throw new ConfigError(`${label}: ${file} is not a Hugging Face tokenizer.json (no "model" section)`);
  }
  const config = (await readOptionalJson(join(dir, 'tokenizer_config.json'), label)) ?? {};
  let source = chatTemplateSource(config.chat_template);
  if (source === undefined && (await statOrNull(join(dir, 'chat_template.jinja')))?.isFile() === true) {
    source = await readFile(join(dir, 'chat_template.jinja'), 'utf8');
  }
  source ??= chatTemplateSource((await readOptionalJson(join(dir, 'chat_template.json'), label))?.chat_template);
  let tokenizer: HfTokenizerType;
  try {
    tokenizer = new HfTokenizer(basename(dir) || file, json, config);
  } catch (error) {
    throw new ConfigError(`${label}: cannot load ${file}: ${(error as Error).message}`, { cause: error });
  }
  const specials = {
    bos_token: tokenText(config.bos_token),
    eos_token: tokenText(config.eos_token),
    pad_token: tokenText(config.pad_token),
    unk_token: tokenText(config.unk_token),
  };
  const template = source === undefined ? chatmlTemplate : jinjaChatTemplate(`chat template of ${dir}`, source, specials);
  return { tokenizer, template, source: file };
}

function approxCounter(source: string): TokenCounter {
  return { tokenizer: approxTokenizer, template: chatmlTemplate, source };
}

async function fromHub(spec: string, label: string, env: NodeJS.ProcessEnv, warn: (message: string) => void): Promise<TokenCounter> {
  const settings = hubSettingsFromEnv(env);
  const { repo, revision } = splitRevision(spec);
  const cached = await findCachedSnapshot(repo, revision, settings.cacheDir);
  if (settings.offline) {
    if (cached === undefined) {
      throw new ConfigError(`${label}: ${spec} is not in the Hugging Face cache (${settings.cacheDir}) and HF_HUB_OFFLINE is set`, {
        hint: 'unset HF_HUB_OFFLINE to download it, or pass a local tokenizer.json / model folder',
      });
    }
    return withSource(await loadTokenizerPath(cached, label, warn), spec);
  }
  let snapshot: string;
  try {
    snapshot = await downloadTokenizer(repo, revision, settings);
  } catch (error) {
    if (cached === undefined) {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(`${label}: cannot download ${spec} from ${settings.endpoint}: ${(error as Error).message}`, {
        cause: error,
        hint: 'set HF_ENDPOINT for a mirror, or pass a local tokenizer.json / model folder',
      });
    }
    warn(`${label}: cannot reach ${settings.endpoint} (${(error as Error).message}); using the cached copy of ${spec}`);
    snapshot = cached;
  }
  return withSource(await loadTokenizerPath(snapshot, label, warn), spec);
}

function withSource(counter: TokenCounter, source: string): TokenCounter {
  return { ...counter, source };
}

async function explicit(spec: string, env: NodeJS.ProcessEnv, warn: (message: string) => void): Promise<TokenCounter> {
  const label = `--tokenizer ${spec}`;
  const trimmed = spec.trim();
  if (trimmed === '') throw new ConfigError(`--tokenizer: expected a value (server, approx, tiktoken:cl100k_base, a path or a model id)`);
  if (trimmed === 'approx') {
    warn(`token counts are approximate (--tokenizer approx: ${APPROX_NOTE})`);
    return approxCounter('approx');
  }
  // The expected cache counts in the server's ids (cache-model/setup.ts); what is counted locally (a
  // generated dataset's lengths, counts a server did not report) stays approximate.
  if (trimmed === 'server') return approxCounter('server');
  if (trimmed.startsWith('tiktoken:')) {
    const name = trimmed.slice('tiktoken:'.length);
    if (!(TIKTOKEN_ENCODINGS as readonly string[]).includes(name)) {
      throw new ConfigError(`${label}: unknown encoding "${name}"; expected one of ${TIKTOKEN_ENCODINGS.join(', ')}`);
    }
    return { tokenizer: await TiktokenTokenizer.load(name as TiktokenEncodingName), template: chatmlTemplate, source: trimmed };
  }
  if ((await statOrNull(trimmed)) !== null) return loadTokenizerPath(trimmed, label, warn);
  if (/^(\.|\/|~)/.test(trimmed) || trimmed.endsWith('.json') || !looksLikeRepoId(trimmed)) {
    throw new ConfigError(`${label}: no such file or folder, and not a Hugging Face model id`, {
      hint: 'expected server, approx, tiktoken:cl100k_base, tiktoken:o200k_base, a tokenizer.json, a model folder, or owner/name',
    });
  }
  return fromHub(trimmed, label, env, warn);
}

/**
 * The token counter chatload counts with: `--tokenizer` when given (see TokenizerSpec), else the tokenizer of
 * `model` when it is a local folder or already in the Hugging Face cache, else the approximate tokenizer (with a
 * warning that says how to get exact counts when a model was named). Bad specs are a one-line ConfigError (exit 2).
 */
export async function resolveTokenCounter(spec: TokenizerSpec = {}): Promise<TokenCounter> {
  const warn = spec.warn ?? (() => {});
  const env = spec.env ?? process.env;
  if (spec.tokenizer !== undefined) return explicit(spec.tokenizer, env, warn);
  const model = spec.model?.trim();
  if (model === undefined || model === '') return approxCounter('approx (no model given)');
  const label = `the tokenizer of -m ${model}`;
  const info = await statOrNull(model);
  if (info !== null && (await statOrNull(info.isDirectory() ? join(model, 'tokenizer.json') : model)) !== null) {
    return loadTokenizerPath(model, label, warn);
  }
  if (looksLikeRepoId(model)) {
    const settings = hubSettingsFromEnv(env);
    const { repo, revision } = splitRevision(model);
    const cached = await findCachedSnapshot(repo, revision, settings.cacheDir);
    if (cached !== undefined) return withSource(await loadTokenizerPath(cached, label, warn), model);
  }
  warn(
    `token counts are approximate (${APPROX_NOTE}): no tokenizer for model "${model}" in a local folder or the Hugging Face cache; ` +
      `pass --tokenizer ${looksLikeRepoId(model) ? model : 'owner/name'} to download it, or --tokenizer PATH or tiktoken:cl100k_base`,
  );
  return approxCounter(`approx (no tokenizer for ${model})`);
}
