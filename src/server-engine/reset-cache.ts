import { answered, jsonOf, ProbeHttp, type ProbeAnswer, type ProbeFailure } from './probe.js';
import { engineDisplayName, ENGINE_PROFILES, type EngineName } from './profiles.js';
import { counted } from '../util/plural.js';

/** Whether --reset-prefix-cache emptied the cache, and what the server said (one line, secrets removed). */
export interface CacheResetResult {
  ok: boolean;
  detail: string;
}

/** Options of {@link resetPrefixCache}. */
export interface ResetPrefixCacheOptions {
  /** Server root, e.g. `http://127.0.0.1:8000` (no `/v1`). */
  rootUrl: string;
  /** Auth and --header, sent with every request. */
  headers?: Readonly<Record<string, string>>;
  /** Longest wait for one request (ms). @default 10000 */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Most llama.cpp slots erased one by one (a server has one per --parallel). */
const MAX_SLOTS = 1024;

/**
 * Empties `engine`'s prefix cache the way that engine allows: vLLM `POST /reset_prefix_cache`, SGLang
 * `POST /flush_cache`, llama.cpp `POST /slots/{id}?action=erase` for each slot `GET /slots` lists, an unknown engine
 * vLLM's then SGLang's endpoint. Never throws: says whether it worked and, if not, why.
 */
export async function resetPrefixCache(engine: EngineName, options: ResetPrefixCacheOptions): Promise<CacheResetResult> {
  const http = new ProbeHttp({ rootUrl: options.rootUrl, headers: options.headers, timeoutMs: options.timeoutMs ?? 10_000, signal: options.signal });
  const said = (what: string, result: ProbeAnswer | ProbeFailure): string =>
    answered(result) ? `${what} answered HTTP ${result.status}${result.text.trim() ? `: ${http.excerpt(result.text, 120)}` : ''}` : `${what}: ${result.error}`;
  const is2xx = (result: ProbeAnswer | ProbeFailure): boolean => answered(result) && result.status >= 200 && result.status < 300;
  try {
    const method = ENGINE_PROFILES[engine].reset;
    switch (method.kind) {
      case 'none':
        return { ok: false, detail: method.reason };
      case 'post': {
        const result = await http.post(method.path);
        if (is2xx(result)) return { ok: true, detail: `POST ${method.path}: HTTP ${(result as ProbeAnswer).status}` };
        return { ok: false, detail: `${said(`POST ${method.path}`, result)}; ${method.refusedHint}` };
      }
      case 'try': {
        const tried: string[] = [];
        for (const path of method.paths) {
          const result = await http.post(path);
          if (is2xx(result)) return { ok: true, detail: `POST ${path}: HTTP ${(result as ProbeAnswer).status}${tried.length > 0 ? ` (after ${tried.join('; ')})` : ''}` };
          tried.push(said(`POST ${path}`, result));
        }
        return { ok: false, detail: tried.join('; ') };
      }
      case 'llamacpp-slots':
        return await eraseSlots(http, said, is2xx);
    }
  } finally {
    await http.close();
  }
}

/** llama.cpp: erase every slot GET /slots lists (each slot keeps its own prompt cache). */
async function eraseSlots(
  http: ProbeHttp,
  said: (what: string, result: ProbeAnswer | ProbeFailure) => string,
  is2xx: (result: ProbeAnswer | ProbeFailure) => boolean,
): Promise<CacheResetResult> {
  const listed = await http.get('/slots');
  // tools/server/server-context.cpp: 501 not_supported_error when the server runs with --no-slots (older builds
  // needed --slots to turn it on); a build that predates /slots answers 404.
  if (!is2xx(listed)) return { ok: false, detail: `${said('GET /slots', listed)}; llama-server cannot list its slots (start it with --slots)` };
  const slots = jsonOf(listed as ProbeAnswer);
  const ids = Array.isArray(slots) ? slots.map((slot) => (slot as { id?: unknown } | null)?.id).filter((id): id is number => Number.isInteger(id)) : [];
  if (!Array.isArray(slots)) return { ok: false, detail: `GET /slots did not answer a list of slots: ${http.excerpt((listed as ProbeAnswer).text, 80)}` };
  let erasedTokens = 0;
  for (const id of ids.slice(0, MAX_SLOTS)) {
    const path = `/slots/${id}?action=erase`;
    const result = await http.post(path);
    // Slot actions (save, restore and erase alike) need --slot-save-path: without it every one is 501.
    if (!is2xx(result)) return { ok: false, detail: `${said(`POST ${path}`, result)}; llama-server allows slot actions only with --slot-save-path` };
    const erased = (jsonOf(result as ProbeAnswer) as { n_erased?: unknown } | undefined)?.n_erased;
    if (typeof erased === 'number' && Number.isFinite(erased)) erasedTokens += erased;
  }
  return { ok: true, detail: `erased ${counted(ids.length, 'slot')} (${counted(erasedTokens, 'cached token')})` };
}

/** The run's warning when the reset did not happen; it names the detected engine. */
export function resetWarning(engine: EngineName, result: CacheResetResult): string {
  return `--reset-prefix-cache: could not empty the prefix cache of ${engineDisplayName(engine)} (${result.detail}); the run starts with whatever its cache holds`;
}
