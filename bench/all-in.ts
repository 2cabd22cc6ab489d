// chatload "all-in" against the client floor (issue 17, part 4): the two command lines every bench that compares
// them runs (bench/startup.ts sections 2-4, bench/node-flags.ts), so that both measure the same runs.
import { fileURLToPath } from 'node:url';
import { syntheticConversations, writeDataset } from '../test/helpers/datasets.js';

/** Concurrency of both clients: `-p 50`, as the target says. */
export const ALL_IN_CLIENTS = 50;
/** bin/chatload.js: the bundle, as the `chatload` command runs it. */
export const CHATLOAD_BIN = fileURLToPath(new URL('../bin/chatload.js', import.meta.url));
const FLOOR = fileURLToPath(new URL('client-floor.mjs', import.meta.url));

/**
 * Writes the comparison's dataset into `dir`: 6 user turns a conversation (a 150-word prefix, 40-word user turns) and
 * enough conversations that every client still has some left after `requests` requests (250 at least). Returns its path.
 */
export function writeAllInDataset(dir: string, requests: number): string {
  return writeDataset(dir, syntheticConversations({ count: Math.max(250, Math.ceil(requests / 5)), userTurns: () => 6, prefixWords: 150, userWords: 40, answerWords: 60 }));
}

/** One run of either client: its server, dataset and length. */
export interface AllInRun {
  url: string;
  dataset: string;
  requests: number;
}

/**
 * `chatload run` all-in (start-up, the run, requests.jsonl, results.json, report.html) as node's arguments. No
 * max_tokens or min_tokens, so the floor sends the same body and cpu-tiny answers both with its 128-token default.
 */
export function chatloadArgs(run: AllInRun, outputDir: string, bin = CHATLOAD_BIN): string[] {
  return [bin, 'run', '-u', run.url, '-i', run.dataset, '-p', String(ALL_IN_CLIENTS), '-n', String(run.requests), '--tokenizer', 'approx', '--limit-min-tokens', '-1', '--limit-max-tokens', '-1', '-q', '--output-dir', outputDir];
}

/** The client floor (bench/client-floor.mjs) as node's arguments: it prints one JSON line, {sent, failed}. */
export function floorArgs(run: AllInRun): string[] {
  return [FLOOR, run.url, run.dataset, String(ALL_IN_CLIENTS), String(run.requests)];
}
