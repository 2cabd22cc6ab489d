// Benchmark: the cost of a run's analysis per record. A run records its RunAggregate as records are written (add(),
// on the benchmark's own event loop) and summarizes it at the end; before, the end of a run read requests.jsonl back
// and streamed it through the summaries. Every case reads the same requests.jsonl (records of 100 inter-token gaps,
// as in a run of 100-token answers), each in its own child process so that its peak RSS is its own:
//   parse    only JSON.parse of every line: what any reading of the file costs, the floor of the old path
//   add      RunAggregate.add() of every record (timed alone: in a run the records are not parsed, they are built)
//   end      the summaries from the aggregate at the end (plus, for warmup percentages above 0 past 100,000 records,
//            the one more pass over requests.jsonl that the cuts need)
//   baseline with --baseline REV (a git revision, or a folder holding an older chatload's src/): that version's
//            analyzeRecordsFile() from src/benchmark/stream-analysis.ts on the same file, in the same run
// Usage: node --import tsx bench/aggregate.ts [--records N] [--baseline REV|DIR]   (default 1,000,000 records)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { RequestsJsonlSink } from '../src/store/requests-jsonl.js';
import { makeRecord } from '../test/metrics/record-fixtures.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
const RECORDS = Number(arg('--records') ?? 1_000_000);
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'chatload-bench-aggregate-'));

/** The same records as bench history: 50,000 conversations of up to 20 turns, 100 gaps each, one sent every 0.1 ms. */
function writeRun(records: number): string {
  const path = join(dir, `requests-${records}.jsonl`);
  const sink = RequestsJsonlSink.open(path);
  for (let i = 0; i < records; i++) {
    sink.write(makeRecord({ conversation_id: `c${i % 50_000}`, turn: 1 + (Math.floor(i / 50_000) % 20), sent_at_ms: i / 10, done_at_ms: i / 10 + 900, ttft_ms: 20 + (i % 97), e2el_ms: 900 + (i % 101), input_num_tokens: 100 + (i % 4000), itl_ms: Array.from({ length: 100 }, (_, k) => 20 + ((i * 7 + k) % 13) + 0.123) }));
  }
  sink.close();
  return path;
}

/** A folder holding the baseline's src/ and package.json (from git when REV is not a folder), with this repo's node_modules. */
function baselineSource(rev: string): string {
  if (existsSync(join(rev, 'src'))) return resolve(rev);
  const out = join(dir, 'baseline');
  mkdirSync(out);
  execFileSync('sh', ['-c', `git archive ${JSON.stringify(rev)} src package.json | tar -x -C ${JSON.stringify(out)}`], { cwd: root });
  symlinkSync(realpathSync(join(root, 'node_modules')), join(out, 'node_modules'));
  return out;
}

interface CaseResult {
  addUsPerRecord?: number;
  addMaxMs?: number;
  /** 99.9th percentile of one add(), ms (the max is mostly the machine: a preemption or a GC lands in some add()). */
  addP999Ms?: number;
  endUsPerRecord?: number;
  totalUsPerRecord: number;
  peakMb: number;
}

/** Runs `body` (module code that sets `result` to a CaseResult without peakMb) in a child process. */
function runCase(body: string, imports: string): CaseResult {
  const code = `${imports}
    const result = {};
    ${body}
    result.peakMb = process.resourceUsage().maxRSS / 1024;
    console.log(JSON.stringify(result));`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', timeout: 1_800_000 });
  if (child.status !== 0) throw new Error(`case failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as CaseResult;
}

const parseCase = (path: string): CaseResult =>
  runCase(
    `const t = performance.now();
    const n = await streamRequestsJsonl(${JSON.stringify(path)}, () => {});
    result.totalUsPerRecord = ((performance.now() - t) * 1000) / n;`,
    `import { streamRequestsJsonl } from './src/store/requests-jsonl.ts';`,
  );

const aggregateCase = (path: string, percentages: number[]): CaseResult =>
  runCase(
    `const options = normalizeRunOptions({ warmupPercentages: ${JSON.stringify(percentages)} });
    const aggregate = new RunAggregate(runAggregateOptions(options));
    let addMs = 0;
    const each = [];
    const n = await streamRequestsJsonl(${JSON.stringify(path)}, (r) => {
      const t = performance.now();
      aggregate.add(r);
      const ms = performance.now() - t;
      addMs += ms;
      each.push(ms);
    });
    const sorted = Float64Array.from(each).sort();
    const maxMs = sorted[sorted.length - 1];
    result.addP999Ms = sorted[Math.floor(0.999 * (sorted.length - 1))];
    const t = performance.now();
    await analyzeAggregate(aggregate, (visit) => streamRequestsJsonl(${JSON.stringify(path)}, visit));
    const endMs = performance.now() - t;
    Object.assign(result, { addUsPerRecord: (addMs * 1000) / n, addMaxMs: maxMs, endUsPerRecord: (endMs * 1000) / n, totalUsPerRecord: ((addMs + endMs) * 1000) / n });`,
    `import { analyzeAggregate } from './src/metrics/run-analysis.ts';
    import { RunAggregate, runAggregateOptions } from './src/metrics/run-aggregate.ts';
    import { normalizeRunOptions } from './src/options/run-options.ts';
    import { streamRequestsJsonl } from './src/store/requests-jsonl.ts';`,
  );

const baselineCase = (path: string, source: string, percentages: number[]): CaseResult =>
  runCase(
    `const options = normalizeRunOptions({ warmupPercentages: ${JSON.stringify(percentages)} });
    const t = performance.now();
    const a = await analyzeRecordsFile(${JSON.stringify(path)}, options);
    result.totalUsPerRecord = ((performance.now() - t) * 1000) / (a.summary.requests + a.summary.warmup_excluded);`,
    `import { analyzeRecordsFile } from ${JSON.stringify(join(source, 'src/benchmark/stream-analysis.ts'))};
    import { normalizeRunOptions } from ${JSON.stringify(join(source, 'src/options/run-options.ts'))};`,
  );

try {
  const rev = arg('--baseline');
  const source = rev === undefined ? undefined : baselineSource(rev);
  const us = (x: number | undefined): string => (x === undefined ? '' : x.toFixed(2));
  const table = new Table({ head: ['records', 'file MB', 'analysis', 'warmup %', 'add µs/rec', 'add p99.9 / max ms', 'end µs/rec', 'total µs/rec', 'vs parse', 'peak RSS MB'], style: { head: [], border: [] } });
  for (const records of [100_000, RECORDS]) {
    const path = writeRun(records);
    const mb = (statSync(path).size / 1048576).toFixed(0);
    const parse = parseCase(path);
    const row = (name: string, percentages: string, r: CaseResult): void => {
      table.push([records.toLocaleString('en-US'), mb, name, percentages, us(r.addUsPerRecord), r.addMaxMs === undefined ? '' : `${r.addP999Ms!.toFixed(3)} / ${r.addMaxMs.toFixed(1)}`, us(r.endUsPerRecord), us(r.totalUsPerRecord), `${(r.totalUsPerRecord / parse.totalUsPerRecord).toFixed(2)}x`, r.peakMb.toFixed(0)]);
    };
    row('parse only', '', parse);
    for (const percentages of [[0], [0, 10]]) {
      if (source !== undefined) row(`baseline ${rev}`, percentages.join(','), baselineCase(path, source, percentages));
      row('RunAggregate', percentages.join(','), aggregateCase(path, percentages));
    }
    rmSync(path);
  }
  console.log('a run\'s analysis per record: RunAggregate (add() during the run, summaries at the end) against reading requests.jsonl back');
  console.log(table.toString());
} finally {
  rmSync(dir, { recursive: true, force: true });
}
