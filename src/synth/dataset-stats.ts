import type { Conversation } from '../conversation/types.js';
import { describe, type Stats } from '../metrics/stats.js';
import { messageText } from '../tokenizer/content.js';
import type { Tokenizer } from '../tokenizer/types.js';

/** One row of dataset statistics: the reference's pandas `describe()` columns for one quantity (metrics/stats.ts). */
export type StatsRow = Stats & { name: string };

const EMPTY: Stats = { count: 0, mean: Number.NaN, std: 0, min: Number.NaN, p25: Number.NaN, p50: Number.NaN, p75: Number.NaN, p90: Number.NaN, p99: Number.NaN, p99_9: Number.NaN, max: Number.NaN };

function row(name: string, values: number[]): StatsRow {
  return { name, ...(describe(values) ?? EMPTY) };
}

/**
 * The statistics the reference prints for a dataset (`print_stats`): messages per conversation (`num_turns`),
 * tokens per user message, per assistant message, and per request (every message up to and including that user
 * turn, system prompt included, summed without a chat template), all in tokens of `tokenizer`.
 */
export function datasetStats(conversations: readonly Conversation[], tokenizer: Tokenizer): StatsRow[] {
  const turns: number[] = [];
  const user: number[] = [];
  const assistant: number[] = [];
  const request: number[] = [];
  const cache = new Map<string, number>();
  const count = (text: string): number => {
    let n = cache.get(text);
    if (n === undefined) {
      n = tokenizer.count(text);
      // Answers repeat (generated ones come from the same place); user messages rarely do, so bound the cache.
      if (cache.size < 10_000) cache.set(text, n);
    }
    return n;
  };
  for (const c of conversations) {
    turns.push(c.messages.filter((m) => m.role !== 'system').length);
    let history = 0;
    for (const m of c.messages) {
      const n = count(messageText(m.content));
      history += n;
      if (m.role === 'user') {
        user.push(n);
        request.push(history);
      } else if (m.role === 'assistant') assistant.push(n);
    }
  }
  return [row('num_turns', turns), row('user tokens', user), row('assistant tokens', assistant), row('request tokens', request)];
}

/** The rows as a fixed-width text table (count, mean, std, min, 25%, 50%, 75%, 90%, 99%, max). */
export function formatStats(rows: readonly StatsRow[]): string {
  const header = ['', 'count', 'mean', 'std', 'min', '25%', '50%', '75%', '90%', '99%', 'max'];
  const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(1));
  const lines = [header, ...rows.map((r) => [r.name, String(r.count), fmt(r.mean), fmt(r.std), fmt(r.min), fmt(r.p25), fmt(r.p50), fmt(r.p75), fmt(r.p90), fmt(r.p99), fmt(r.max)])];
  const widths = header.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  return lines.map((l) => l.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')).join('\n');
}
