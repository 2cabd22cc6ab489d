import { parseJsonWithLocation } from '../conversation/json-location.js';
import { loadDataset } from '../conversation/load.js';
import type { Conversation, TraceSession, TraceTurn } from '../conversation/types.js';
import { DatasetError } from '../errors/index.js';
import { letLoopGo } from '../util/loop-turns.js';
import { utf8Lines } from '../util/utf8-text.js';
import { timedRequests } from './trace-stats.js';
import { scaleLength, synthesisRng, type TraceSynthesisOptions, type TraceSynthesisSummary } from './trace-synthesis.js';

/*
 * Synthesis of a hash-id trace (Mooncake, Bailian) in two passes. The first loads the trace as a replay would
 * (sessions, each row's turn) and decides each turn's new lengths and hash ids; the second streams the file again and
 * writes each row with its turn's new values, every other field as it was.
 *
 * Hash ids. Kept (no --prefix-share): with --isl-scale K each block of the prompt becomes about K blocks, block j of
 * the new prompt standing for block floor(j / K) of the old one (its id and its place in the group), so two prompts
 * that shared their first b blocks share their first ceil(b K): the hit ratio stays about what it was. Set
 * (--prefix-share F): the requests are taken in the order `trace stats` counts them, and each gets a prefix of s
 * blocks copied from an earlier request (its session's previous one when that is long enough, else the longest so far)
 * then fresh ids, s chosen so that the hit tokens so far stay the nearest whole block to F times the input tokens so far.
 * Fresh ids are never cached before, so a request hits exactly its s blocks and the theoretical hit ratio of the new
 * trace is F up to a block's rounding over the trace (and what the first requests, with nothing before them, cannot hit).
 */

/** The file's rows' turns by line, and the largest hash id. */
interface Loaded {
  conversations: Conversation[];
  turns: Map<number, TraceTurn>;
  blockSize: number;
  maxId: number;
}

async function loadTrace(file: string, format: 'mooncake' | 'bailian' | undefined, blockSize: number | undefined, allowInvalidUtf8: boolean): Promise<Loaded> {
  const turns = new Map<number, TraceTurn>();
  let maxId = -1;
  const onTurn = (turn: TraceTurn, line: number): void => {
    turns.set(line, turn);
    for (const id of turn.hashIds) if (id > maxId) maxId = id;
  };
  const loaded = await loadDataset(file, { traceOnly: true, allowInvalidUtf8, trace: { format, blockSize, onTurn } });
  if (loaded.format !== 'mooncake' && loaded.format !== 'bailian') throw new DatasetError({ file }, `not a production trace (read as ${loaded.format})`);
  return { conversations: loaded.conversations, turns, blockSize: loaded.conversations[0]!.trace!.blockSize, maxId };
}

/** New lengths for every turn, in file order (the draws' order); block ids follow the lengths when kept. */
function scaleTurns(loaded: Loaded, options: TraceSynthesisOptions): void {
  const rng = synthesisRng(options.seed);
  const k = options.islScale;
  const group = Math.max(1, Math.ceil(k));
  let fresh = (loaded.maxId + 1) * group;
  for (const turn of loaded.turns.values()) {
    turn.outputLength = scaleLength(turn.outputLength, options.oslScale, rng);
    if (turn.messages !== undefined) continue;
    const old = turn.hashIds;
    turn.inputLength = scaleLength(turn.inputLength, k, rng);
    if (k === 1 || options.prefixShare !== undefined) continue;
    const blocks = Math.ceil(turn.inputLength / loaded.blockSize);
    turn.hashIds = Array.from({ length: blocks }, (_, j) => {
      const g = Math.floor(j / k);
      return g < old.length ? old[g]! * group + (j - Math.ceil(g * k)) : fresh++;
    });
  }
}

/** Sets every hash-block turn's ids so that the theoretical hit ratio is `share` (see the top of the file). */
function setPrefixShare(loaded: Loaded, share: number): void {
  const B = loaded.blockSize;
  const sessionOf = new Map<TraceTurn, TraceSession>();
  for (const c of loaded.conversations) for (const turn of c.trace!.turns) sessionOf.set(turn, c.trace!);
  const lastOf = new Map<TraceSession, TraceTurn>();
  const full = (turn: TraceTurn): number => Math.floor(turn.inputLength / B);
  let longest: TraceTurn | undefined;
  let fresh = 0;
  let inputTokens = 0;
  let hitTokens = 0;
  for (const { turn, blocks } of timedRequests(loaded.conversations)) {
    if (!blocks) continue;
    inputTokens += turn.inputLength;
    const want = Math.round((share * inputTokens - hitTokens) / B);
    const s = Math.max(0, Math.min(want, full(turn), longest === undefined ? 0 : full(longest)));
    const previous = lastOf.get(sessionOf.get(turn)!);
    const donor = previous !== undefined && full(previous) >= s ? previous : longest;
    const ids = s > 0 ? donor!.hashIds.slice(0, s) : [];
    while (ids.length < Math.ceil(turn.inputLength / B)) ids.push(fresh++);
    turn.hashIds = ids;
    hitTokens += s * B;
    lastOf.set(sessionOf.get(turn)!, turn);
    if (longest === undefined || full(turn) > full(longest)) longest = turn;
  }
}

/** A time `atMs` into the replay, on the trace's own clock `t` (its unit: `unitMs`), moved to `atMs / rateScale`. */
function scaledTime(t: number, atMs: number, unitMs: number, rateScale: number): number {
  const moved = t - atMs / unitMs + atMs / unitMs / rateScale;
  // To the microsecond: the output stays readable, and no two distinct times meet.
  return unitMs === 1 ? Math.round(moved * 1000) / 1000 : Math.round(moved * 1e6) / 1e6;
}

/** Writes the synthesis of the Mooncake or Bailian trace `file` through `write`. */
export async function synthesizeHashTrace(
  file: string,
  format: 'mooncake' | 'bailian' | undefined,
  options: TraceSynthesisOptions & { blockSize?: number; allowInvalidUtf8: boolean },
  write: (text: string) => void,
): Promise<TraceSynthesisSummary> {
  const loaded = await loadTrace(file, format, options.blockSize, options.allowInvalidUtf8);
  scaleTurns(loaded, options);
  if (options.prefixShare !== undefined) setPrefixShare(loaded, options.prefixShare);
  const read = loaded.conversations[0]!.trace!.format as 'mooncake' | 'bailian';
  const unitMs = read === 'bailian' ? 1000 : 1;
  let line = 0;
  for await (const text of utf8Lines(file, { allowInvalidUtf8: options.allowInvalidUtf8, maxLineChars: 256 * 1024 * 1024 })) {
    line += 1;
    const turn = loaded.turns.get(line);
    if (turn === undefined) continue;
    const row = parseJsonWithLocation(text, file, line - 1) as Record<string, unknown>;
    if (typeof row.timestamp === 'number' && turn.atMs !== undefined) row.timestamp = scaledTime(row.timestamp, turn.atMs, unitMs, options.rateScale);
    if (typeof row.delay === 'number') row.delay = row.delay / options.rateScale;
    if (turn.messages === undefined) {
      row.input_length = turn.inputLength;
      row.hash_ids = turn.hashIds;
    }
    row.output_length = turn.outputLength;
    write(`${JSON.stringify(row)}\n`);
    if (line % 500 === 0) await letLoopGo();
  }
  return { format: read, requests: loaded.turns.size };
}
