import type { ServerUsage, StreamResult } from './types.js';

/** Most tokens one request can hold: a count above it is not a count (issue #35: `prompt_tokens` 1e20). */
const MAX_USAGE_TOKENS = 1e9;

const isCount = (x: number): boolean => Number.isInteger(x) && x >= 0 && x <= MAX_USAGE_TOKENS;

/**
 * Takes a server's usage into the result, without what cannot be true (issue #35): a prompt or completion count that
 * is no count (negative, fractional, past a billion) drops the whole usage (local counts stand in); cached tokens
 * above the prompt's, or reasoning above the completion's, are dropped alone. What was dropped is named in
 * `result.invalidUsage` (the run counts it and warns once a kind).
 */
export function acceptUsage(result: StreamResult, usage: ServerUsage | undefined): void {
  if (usage === undefined) return;
  const invalid: string[] = [];
  if (!isCount(usage.promptTokens)) invalid.push('prompt_tokens');
  if (!isCount(usage.completionTokens)) invalid.push('completion_tokens');
  const checked: ServerUsage = { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens };
  if (usage.cachedTokens !== undefined) {
    if (isCount(usage.cachedTokens) && usage.cachedTokens <= usage.promptTokens) checked.cachedTokens = usage.cachedTokens;
    else invalid.push('cached_tokens');
  }
  if (usage.reasoningTokens !== undefined) {
    if (isCount(usage.reasoningTokens) && usage.reasoningTokens <= usage.completionTokens) checked.reasoningTokens = usage.reasoningTokens;
    else invalid.push('reasoning_tokens');
  }
  if (invalid.length > 0) result.invalidUsage = invalid;
  if (invalid.includes('prompt_tokens') || invalid.includes('completion_tokens')) delete result.usage;
  else result.usage = checked;
}

/** A chat or completions `usage` object as a server sends it: everything optional, every value unchecked. */
export interface UsageJson {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
}

/**
 * The token counts of a chat or completions `usage` object (`prompt_tokens`, `completion_tokens`, their details);
 * undefined when it lacks the two counts. llama-server's `timings.cache_n` stands in for cached tokens when
 * prompt_tokens_details is absent.
 */
export function chatUsageOf(usage: UsageJson, timings?: { cache_n?: unknown } | null): ServerUsage | undefined {
  const prompt = usage.prompt_tokens;
  const completion = usage.completion_tokens;
  if (typeof prompt !== 'number' || typeof completion !== 'number') return undefined;
  const parsed: ServerUsage = { promptTokens: prompt, completionTokens: completion };
  // llama-server before prompt_tokens_details says what it reused from its cache only in `timings.cache_n`.
  const cached = usage.prompt_tokens_details?.cached_tokens ?? timings?.cache_n;
  if (typeof cached === 'number') parsed.cachedTokens = cached;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') parsed.reasoningTokens = reasoning;
  return parsed;
}
