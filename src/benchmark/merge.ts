import { join } from 'node:path';
import { DatasetError } from '../errors/index.js';
import type { RequestRecord } from '../metrics/record.js';
import { normalizeRunOptions } from '../options/run-options.js';
import { RequestsJsonlSink } from '../report/requests-jsonl.js';
import { buildResultsDocument, writeJsonAtomic } from '../report/results-json.js';
import { loadRunData, type RunData } from '../report/run-data.js';
import { writeRunReports } from '../report/write-reports.js';
import { analyzeRecords } from './analysis.js';
import { prepareOutputDir } from './output-dir.js';

/** What a merge produced. */
export interface MergeResult {
  outputDir: string;
  runs: number;
  records: number;
  files: { requests: string; results: string; html?: string };
}

/**
 * Puts records of several runs on one clock: each record's send time becomes its wall-clock start minus the earliest
 * start of all, and its other times move with it. Records of one run keep their spacing exactly.
 */
export function rebaseRecords(records: readonly RequestRecord[]): RequestRecord[] {
  let t0 = Number.POSITIVE_INFINITY;
  for (const r of records) t0 = Math.min(t0, r.start_time_ms);
  const round = (x: number): number => Math.round(x * 1000) / 1000;
  return records
    .map((r) => {
      const shift = r.start_time_ms - t0 - r.sent_at_ms;
      const move = (x: number | null): number | null => (x === null ? null : round(x + shift));
      return {
        ...r,
        sent_at_ms: round(r.sent_at_ms + shift),
        first_token_at_ms: move(r.first_token_at_ms),
        done_at_ms: round(r.done_at_ms + shift),
        scheduled_at_ms: move(r.scheduled_at_ms ?? null),
      };
    })
    .sort((a, b) => a.sent_at_ms - b.sent_at_ms);
}

/** The options the runs were made with, as far as summaries need them (goodput SLOs, warmup percentages). */
function summaryOptions(run: RunData) {
  const config = run.config;
  const goodput = Array.isArray(config.goodput) ? config.goodput.filter((x): x is string => typeof x === 'string') : undefined;
  const warmupPercentages = Array.isArray(config.warmupPercentages) ? config.warmupPercentages.filter((x): x is number => typeof x === 'number') : undefined;
  return normalizeRunOptions({ goodput, warmupPercentages: warmupPercentages?.length ? warmupPercentages : undefined });
}

/**
 * `chatload merge DIR... -o OUT`: combines the results folders of shards (or any runs) into one results folder of
 * the same format: every record (on one clock), exact percentiles recomputed from all of them, conversation counts
 * summed, and the report. Partial shards (no results.json) merge too; the result says how many were unfinished.
 */
export async function mergeRuns(dirs: readonly string[], out: string): Promise<MergeResult> {
  if (dirs.length === 0) throw new DatasetError({ file: '(no folders)' }, 'expected at least one results folder to merge');
  const runs = dirs.map((dir) => loadRunData(dir));
  for (const run of runs) {
    if (!run.hasRecords) throw new DatasetError({ file: join(run.dir, 'requests.jsonl') }, 'a merge needs every run\'s requests.jsonl');
  }
  const records = rebaseRecords(runs.flatMap((r) => r.records));
  const outputDir = prepareOutputDir(out);
  const files: MergeResult['files'] = { requests: join(outputDir, 'requests.jsonl'), results: join(outputDir, 'results.json') };
  const sink = RequestsJsonlSink.open(files.requests);
  try {
    for (const record of records) sink.write(record);
  } finally {
    sink.close();
  }
  const analysis = analyzeRecords(records, summaryOptions(runs[0]!));
  const conversations: Record<string, number> = {};
  for (const run of runs) for (const [key, value] of Object.entries(run.conversations)) conversations[key] = (conversations[key] ?? 0) + value;
  const unfinished = runs.filter((r) => !r.finished).length;
  writeJsonAtomic(
    files.results,
    buildResultsDocument({
      config: runs[0]!.config,
      summary: analysis.summary,
      warmupPercentages: analysis.warmupPercentages,
      perTurn: analysis.perTurn,
      clientHealth: null,
      conversations,
      extra: {
        ...runs[0]!.facts,
        merged_from: runs.map((r) => ({ dir: r.dir, finished: r.finished, records: r.records.length, shard: r.facts.shard ?? null, client_health: r.clientHealth })),
        warnings: unfinished > 0 ? [`${unfinished} of the merged runs did not finish (no results.json): their records are included`] : [],
        conversation_stats: analysis.conversationStats,
        per_conversation: analysis.perConversation,
      },
    }),
  );
  const reports = await writeRunReports(outputDir, { html: true });
  if (reports.html !== undefined) files.html = reports.html;
  return { outputDir, runs: runs.length, records: records.length, files };
}
