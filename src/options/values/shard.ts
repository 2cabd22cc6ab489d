import * as z from 'zod';

/** One shard of a multi-machine run (--shard I/N): 0-based `index` below `count`. */
export interface Shard {
  index: number;
  count: number;
}

/** Parses `--shard I/N` (0-based I < N). Returns undefined for malformed text. */
export function parseShard(text: string): Shard | undefined {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (match === null) return undefined;
  const index = Number(match[1]);
  const count = Number(match[2]);
  return count >= 1 && index < count ? { index, count } : undefined;
}

/** `I/N` as text, validated and parsed into a Shard. */
export const shardSchema = z
  .string()
  .regex(/^\d+\/\d+$/, 'expected I/N, e.g. 0/4 (0-based shard index I below the shard count N)')
  .transform((text, ctx): Shard => {
    const shard = parseShard(text);
    if (shard !== undefined) return shard;
    ctx.addIssue({ code: 'custom', message: 'expected I/N with 0 <= I < N' });
    return z.NEVER;
  });
