import type { ContextBucket } from './summary-types.js';

/** Bucket edges in input tokens: powers of two from 1k to 128k (ttft_by_context; agentic contexts pass 100k, issue #14). */
export const CONTEXT_EDGES = [0, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072];

function contextLabel(tokens: number): string {
  return tokens === 0 ? '0' : `${tokens / 1024}k`;
}

/** The index of the context bucket a prompt of `inputTokens` falls in. */
export function contextBucket(inputTokens: number): number {
  let b = CONTEXT_EDGES.length - 1;
  while (inputTokens < CONTEXT_EDGES[b]!) b -= 1;
  return b;
}

/** A context bucket's label and bounds. */
export function contextRange(b: number): Pick<ContextBucket, 'label' | 'min_tokens' | 'max_tokens'> {
  const min = CONTEXT_EDGES[b]!;
  const max = CONTEXT_EDGES[b + 1] ?? null;
  return { label: max === null ? `${contextLabel(min)}+` : `${contextLabel(min)}-${contextLabel(max)}`, min_tokens: min, max_tokens: max };
}
