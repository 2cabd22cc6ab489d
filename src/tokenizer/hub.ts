import { access, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type * as Hub from '@huggingface/hub';
import { ConfigError } from '../errors/index.js';

/** The tokenizer files chatload fetches from a model repository; only tokenizer.json is required. */
export const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja'] as const;

/** Where and how to reach the Hugging Face Hub, from the environment (see hubSettingsFromEnv). */
export interface HubSettings {
  /** Base URL, no trailing slash. `HF_ENDPOINT`, default https://huggingface.co. */
  endpoint: string;
  /** `HF_TOKEN` (or the older `HUGGING_FACE_HUB_TOKEN`). */
  token: string | undefined;
  /** `HF_HUB_OFFLINE=1`: never touch the network, use the cache only. */
  offline: boolean;
  /** The hub cache folder (`HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`). */
  cacheDir: string;
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

/** The hub settings the Python `huggingface_hub` would use with the same environment. */
export function hubSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): HubSettings {
  const home = env.HF_HOME ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'huggingface');
  return {
    endpoint: (env.HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/+$/, ''),
    token: env.HF_TOKEN ?? env.HUGGING_FACE_HUB_TOKEN ?? undefined,
    offline: truthy(env.HF_HUB_OFFLINE) || truthy(env.TRANSFORMERS_OFFLINE),
    cacheDir: env.HF_HUB_CACHE ?? env.HUGGINGFACE_HUB_CACHE ?? join(home, 'hub'),
  };
}

/** `owner/name` or `name`, with letters, digits, `-`, `_` and `.`, optionally `@revision`. */
const REPO_ID = /^[A-Za-z0-9][\w.-]*(\/[\w.-]+)?(@[\w./-]+)?$/;

/** True when `text` has the shape of a Hub model id (`meta-llama/Llama-2-7b-hf`, optionally `@revision`). */
export function looksLikeRepoId(text: string): boolean {
  return REPO_ID.test(text) && !text.includes('..');
}

/** Splits `owner/name@revision` into the repo and its revision (default `main`). */
export function splitRevision(spec: string): { repo: string; revision: string } {
  const at = spec.indexOf('@');
  return at === -1 ? { repo: spec, revision: 'main' } : { repo: spec.slice(0, at), revision: spec.slice(at + 1) };
}

function repoFolder(cacheDir: string, repo: string): string {
  return join(cacheDir, `models--${repo.split('/').join('--')}`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

const COMMIT = /^[0-9a-f]{40}$/;

/**
 * The cached snapshot folder holding `tokenizer.json` for `repo` at `revision`, or undefined. It follows
 * `refs/{revision}` as huggingface_hub writes it; without a ref it takes the newest snapshot that has the file.
 */
export async function findCachedSnapshot(repo: string, revision: string, cacheDir: string): Promise<string | undefined> {
  const folder = repoFolder(cacheDir, repo);
  let commit: string | undefined = COMMIT.test(revision) ? revision : undefined;
  if (commit === undefined) {
    try {
      commit = (await readFile(join(folder, 'refs', revision), 'utf8')).trim();
    } catch {
      commit = undefined;
    }
  }
  if (commit !== undefined) {
    const dir = join(folder, 'snapshots', commit);
    return (await exists(join(dir, 'tokenizer.json'))) ? dir : undefined;
  }
  let snapshots: string[];
  try {
    snapshots = await readdir(join(folder, 'snapshots'));
  } catch {
    return undefined;
  }
  let best: { dir: string; mtimeMs: number } | undefined;
  for (const name of snapshots) {
    const dir = join(folder, 'snapshots', name);
    try {
      const info = await stat(join(dir, 'tokenizer.json'));
      if (best === undefined || info.mtimeMs > best.mtimeMs) best = { dir, mtimeMs: info.mtimeMs };
    } catch {
      // No tokenizer.json in this snapshot.
    }
  }
  return best?.dir;
}

/** Resolves a branch or tag to its commit (`GET /api/models/{repo}/revision/{revision}` → `sha`). */
async function resolveCommit(repo: string, revision: string, settings: HubSettings): Promise<string> {
  if (COMMIT.test(revision)) return revision;
  const url = `${settings.endpoint}/api/models/${repo}/revision/${encodeURIComponent(revision)}`;
  const response = await fetch(url, { headers: settings.token ? { authorization: `Bearer ${settings.token}` } : {} });
  if (!response.ok) {
    await response.body?.cancel();
    const why =
      response.status === 401 || response.status === 403
        ? `access denied (HTTP ${response.status}): a gated or private model needs HF_TOKEN`
        : response.status === 404
          ? `no such model or revision (HTTP 404)`
          : `HTTP ${response.status}`;
    throw new ConfigError(`--tokenizer ${repo}: ${why} at ${settings.endpoint}`);
  }
  const body = (await response.json()) as { sha?: unknown };
  if (typeof body.sha !== 'string' || !COMMIT.test(body.sha)) {
    throw new ConfigError(`--tokenizer ${repo}: ${settings.endpoint} returned no commit for revision ${revision}`);
  }
  return body.sha;
}

/** Runs `fn` with console.debug silenced: the hub library logs every download to stdout with it. */
async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const original = console.debug;
  console.debug = () => {};
  try {
    return await fn();
  } finally {
    console.debug = original;
  }
}

/**
 * @huggingface/hub, an optional dependency (with its wasm hashers, ~11 MB installed): only a tokenizer download needs
 * it, so an install without it (`--omit=optional`) runs everything else and says what is missing here.
 */
async function loadHub(repo: string): Promise<typeof Hub> {
  try {
    return await import('@huggingface/hub');
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ConfigError(`--tokenizer ${repo}: downloading it from the Hugging Face Hub needs the optional package @huggingface/hub, which is not installed`, {
      cause: error,
      hint: 'npm install @huggingface/hub beside chatload, or pass a local folder or a cached repo to --tokenizer',
    });
  }
}

/**
 * Downloads the tokenizer files of `repo` into the standard HF cache (blobs, snapshots, refs, as huggingface_hub
 * lays them out) and returns the snapshot folder. tokenizer.json must exist; the other TOKENIZER_FILES are fetched
 * when the repository has them.
 */
export async function downloadTokenizer(repo: string, revision: string, settings: HubSettings): Promise<string> {
  const commit = await resolveCommit(repo, revision, settings);
  const common = {
    repo: { type: 'model' as const, name: repo },
    revision: commit,
    hubUrl: settings.endpoint,
    cacheDir: settings.cacheDir,
    ...(settings.token ? { accessToken: settings.token } : {}),
  };
  let snapshot: string | undefined;
  // Loaded on first download only: @huggingface/hub and its wasm hashers cost every start ~40 ms (issue 17).
  const { downloadFileToCacheDir } = await loadHub(repo);
  for (const file of TOKENIZER_FILES) {
    try {
      const path = await quietly(() => downloadFileToCacheDir({ ...common, path: file }));
      snapshot ??= dirname(path);
    } catch (error) {
      if (file === 'tokenizer.json') {
        throw new ConfigError(`--tokenizer ${repo}: cannot download tokenizer.json from ${settings.endpoint}: ${(error as Error).message}`, { cause: error });
      }
      // Optional file missing (or unreadable): the model simply has none.
    }
  }
  if (!COMMIT.test(revision)) {
    // downloadFileToCacheDir writes no ref; write it as huggingface_hub does, so offline runs find this snapshot.
    const refs = join(repoFolder(settings.cacheDir, repo), 'refs');
    await mkdir(join(refs, dirname(revision)), { recursive: true });
    await writeFile(join(refs, revision), commit);
  }
  return snapshot ?? join(repoFolder(settings.cacheDir, repo), 'snapshots', basename(commit));
}
