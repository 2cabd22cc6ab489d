import type { ModelInfo } from '../client/chat-client.js';
import { ConfigError } from '../errors/index.js';
import type { EngineName } from '../server-engine/profiles.js';

/** Most model names listed in the error; a router serving hundreds gets the first ones and a count. */
const MAX_LISTED = 20;

/**
 * The model name the run sends: --served-model-name, else -m, else the first model the server lists (issue #12,
 * part 3). A requested name the server does not list is a ConfigError (exit 2) naming the ones it serves, before any
 * request is sent, except on TGI, which answers any model name with its one model (a warning then). With an empty
 * list there is nothing to check against (a warning).
 */
export function resolveServedModel(
  options: { model?: string; servedModelName?: string },
  models: readonly ModelInfo[],
  serverUrl: string,
  engine: EngineName,
  warn: (message: string) => void,
): string {
  const requested = options.servedModelName ?? options.model;
  if (requested === undefined) return models[0]?.id ?? 'default';
  if (models.some((m) => m.id === requested)) return requested;
  const flag = options.servedModelName === undefined ? '-m' : '--served-model-name';
  const where = displayUrl(serverUrl);
  if (models.length === 0) {
    warn(`GET ${where}/v1/models lists no model, so chatload cannot check that it serves ${JSON.stringify(requested)} (${flag})`);
    return requested;
  }
  const ids = models.map((m) => m.id);
  const listed = ids.length > MAX_LISTED ? `${ids.slice(0, MAX_LISTED).join(', ')} … (${ids.length - MAX_LISTED} more)` : ids.join(', ');
  if (engine === 'tgi') {
    // router/src/server.rs: a chat request's `model` only names the response; TGI always runs the model it loaded.
    warn(`model ${JSON.stringify(requested)} (${flag}) is not listed by ${where}, but TGI answers any model name with its own (${listed})`);
    return requested;
  }
  throw new ConfigError(`model ${JSON.stringify(requested)} is not served by ${where}; it serves: ${listed}`, {
    hint:
      flag === '-m'
        ? 'give one of them with -m, or with --served-model-name to keep -m for the tokenizer'
        : 'give one of them with --served-model-name',
  });
}

/** The URL as messages show it: no credentials, no trailing slash or `/v1`. */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString().replace(/\/+$/, '').replace(/\/v1$/, '');
  } catch {
    return url;
  }
}
