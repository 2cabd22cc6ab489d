import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from '../../src/util/rng.js';

/** Options of writeMooncakeTrace. */
export interface SyntheticTraceOptions {
  rows: number;
  /** Tokens per hash block. */
  blockSize: number;
  /** ms between requests (trace time). */
  gapMs: number;
  /** Shared prefixes (e.g. system prompts) the rows draw from, each 1-4 blocks. */
  prefixes?: number;
  /** Every k-th row opens a session of `turns` turns (the later ones by `delay`); 0 for none. */
  sessionEvery?: number;
  turns?: number;
  seed?: number;
}

/**
 * Writes a Mooncake trace with real prefix sharing: each row starts with one of a few shared prefixes of hash ids,
 * then unique blocks; input lengths are rarely whole blocks (the last block trimmed). Returns the file.
 */
export function writeMooncakeTrace(dir: string, options: SyntheticTraceOptions): string {
  const rng = new Rng(options.seed ?? 1);
  const B = options.blockSize;
  const prefixes = Array.from({ length: options.prefixes ?? 6 }, (_, p) => Array.from({ length: 1 + (p % 4) }, (_v, k) => 1_000 * (p + 1) + k));
  let next = 1_000_000;
  const lines: string[] = [];
  for (let i = 0; i < options.rows; i++) {
    const prefix = prefixes[rng.int(0, prefixes.length - 1)]!;
    const unique = rng.int(1, 4);
    const ids = [...prefix, ...Array.from({ length: unique }, () => next++)];
    const inputLength = (ids.length - 1) * B + rng.int(1, B);
    const row: Record<string, unknown> = { timestamp: i * options.gapMs, input_length: inputLength, output_length: rng.int(2, 8), hash_ids: ids };
    const every = options.sessionEvery ?? 0;
    if (every > 0 && i % every === 0) {
      row.session_id = `s${i}`;
      lines.push(JSON.stringify(row));
      for (let t = 1; t < (options.turns ?? 3); t++) {
        lines.push(JSON.stringify({ session_id: `s${i}`, delay: options.gapMs, input_length: B, output_length: 3, hash_ids: [next++] }));
      }
      continue;
    }
    lines.push(JSON.stringify(row));
  }
  const file = join(dir, 'trace.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}
