import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { RepeatInterval } from '../report/repeats.js';
import type { Command } from 'commander';
import { ConfigError, ExitCode } from '../errors/index.js';
import { parseGateSpec, type Gate } from '../options/values/gate-spec.js';
import { loadRunData, REPORT_MAX_RECORDS, type RunData } from '../store/run-data.js';
import { writeTextAtomic } from '../store/atomic-write.js';
import { prepareOutputFile } from '../store/output-dir.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';
import { terminalWidth } from '../report/terminal-width.js';

/** Records (count) kept per run at least, whatever the number of runs compared. */
const MIN_RECORDS_PER_RUN = 1_000;

interface CompareFlags {
  html?: string;
  failOn?: string;
  summaryMd?: string;
  junit?: string;
}

/**
 * Adds `chatload compare RUN_A RUN_B ... [--html FILE] [--fail-on SPEC [--summary-md FILE] [--junit FILE]]`: a
 * side-by-side table of the key metrics of two or more runs (the first is the baseline), with deltas and percentages;
 * `--html` also writes overlaid per-turn curves and CDFs; `--fail-on` gates the candidate against the baseline (exit 1
 * when a gate fails; report/gates.ts). The runs share one report's memory budget (REPORT_MAX_RECORDS records): a run
 * with more than its share is charted from a uniform sample (see loadRunData).
 */
export function registerCompareCommand(program: Command, setExitCode: (code: number) => void = () => {}): void {
  program
    .command('compare')
    .description(COMMAND_DESCRIPTIONS.compare)
    .addHelpText('after', examplesText('compare'))
    .argument('<results-dirs...>', 'results directories (results.json and/or requests.jsonl), baseline first')
    .option('--html <file>', 'also write an HTML page with overlaid per-turn curves and distributions')
    .option(
      '--fail-on <spec>',
      'a CI gate of BASE CAND: exit 1 when a gate fails, 0 when all pass. Comma-separated METRIC>LIMIT or METRIC<LIMIT, the limit relative (median_ttft_ms>+20%), with a unit (p99_tpot_ms>+5ms) or plain (prefix_cache.efficiency<-0.02); a change inside the noise band never fails',
    )
    .option('--summary-md <file>', 'with --fail-on: also write the gates as a Markdown table (for $GITHUB_STEP_SUMMARY)')
    .option('--junit <file>', 'with --fail-on: also write the gates as JUnit XML, one test case per gate')
    .action(async (dirs: string[], flags: CompareFlags) => {
      const gates = checkGateFlags(dirs, flags);
      // Loaded here, not at start: its charts (and d3-scale) are code only this command needs.
      const { formatComparison, renderCompareHtml } = await import('../report/compare.js');
      const { runs, repeats } = await loadRuns(dirs);
      const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
      process.stdout.write(formatComparison(runs, { color, repeats, width: terminalWidth(process.stdout) }));
      if (flags.html !== undefined) {
        const path = resolve(flags.html);
        writeTextAtomic(path, renderCompareHtml(runs, { repeats }));
        process.stderr.write(`chatload: wrote ${path}\n`);
      }
      if (gates !== undefined && (await runGates(gates, runs, repeats, flags))) setExitCode(ExitCode.runFailed);
    });
}

/** The gates of --fail-on, checked with the flags that go with it before any run is loaded (exit 2 on bad input). */
function checkGateFlags(dirs: readonly string[], flags: CompareFlags): Gate[] | undefined {
  if (dirs.length < 2) throw new ConfigError(`compare needs at least two results directories, got ${dirs.length}`);
  if (flags.failOn === undefined) {
    const orphan = flags.summaryMd !== undefined ? '--summary-md' : flags.junit !== undefined ? '--junit' : undefined;
    if (orphan !== undefined) throw new ConfigError(`compare ${orphan}: writes the gates of --fail-on; add --fail-on SPEC`);
    return undefined;
  }
  const gates = parseGateSpec(flags.failOn);
  if (dirs.length !== 2) throw new ConfigError(`compare --fail-on: gates a candidate against a baseline, BASE CAND; got ${dirs.length} results directories`);
  if (flags.summaryMd !== undefined) prepareOutputFile('--summary-md', flags.summaryMd);
  if (flags.junit !== undefined) prepareOutputFile('--junit', flags.junit);
  return gates;
}

/** Evaluates the gates, prints one line each and writes --summary-md and --junit. Returns true when a gate failed. */
async function runGates(gates: readonly Gate[], runs: readonly RunData[], repeats: ReadonlyArray<RepeatInterval[] | undefined>, flags: CompareFlags): Promise<boolean> {
  const { evaluateGates, gateRows } = await import('../report/gates.js');
  const { formatGates, gatesJunit, gatesMarkdown } = await import('../report/gate-output.js');
  const { runLabels } = await import('../report/compare.js');
  const pair = [runs[0]!, runs[1]!] as const;
  const repeatPair = [repeats[0], repeats[1]] as const;
  const { rows, repeated } = gateRows(pair, repeatPair);
  const results = evaluateGates(gates, rows, repeated ? repeatPair : undefined);
  const [base = '', candidate = ''] = runLabels(runs);
  const named = { base, candidate };
  process.stdout.write(`\n${formatGates(results, named)}`);
  if (flags.summaryMd !== undefined) writeTextAtomic(resolve(flags.summaryMd), gatesMarkdown(results, named));
  if (flags.junit !== undefined) writeTextAtomic(resolve(flags.junit), gatesJunit(results, named));
  const failed = results.filter((r) => r.failed);
  if (failed.length > 0) process.stderr.write(`chatload: --fail-on: ${failed.length} of ${results.length} gates failed: ${failed.map((r) => r.gate.text).join(', ')}\n`);
  return failed.length > 0;
}

/**
 * The runs, one at a time, so that memory holds the samples kept, never several files' passes at once. A `run
 * --repeat N` folder: its first repetition stands for it in the charts, and its repeats.json gives the table each
 * metric's mean across the repetitions and their 95% interval as the noise band.
 */
async function loadRuns(dirs: readonly string[]): Promise<{ runs: RunData[]; repeats: Array<RepeatInterval[] | undefined> }> {
  const maxRecords = Math.max(MIN_RECORDS_PER_RUN, Math.floor(REPORT_MAX_RECORDS / dirs.length));
  const runs: RunData[] = [];
  const repeats: Array<RepeatInterval[] | undefined> = [];
  for (const dir of dirs) {
    const repeatsFile = join(dir, 'repeats.json');
    if (existsSync(repeatsFile) && !existsSync(join(dir, 'results.json')) && !existsSync(join(dir, 'requests.jsonl'))) {
      const doc = JSON.parse(readFileSync(repeatsFile, 'utf8')) as { runs?: string[]; metrics?: RepeatInterval[] };
      const first = doc.runs?.[0];
      if (first === undefined || !Array.isArray(doc.metrics)) throw new ConfigError(`${repeatsFile}: expected runs and metrics (a run --repeat folder)`);
      const data = await loadRunData(existsSync(first) ? first : join(dir, basename(first)), { maxRecords });
      runs.push({ ...data, label: basename(resolve(dir)), dir: resolve(dir) });
      repeats.push(doc.metrics);
    } else {
      runs.push(await loadRunData(dir, { maxRecords }));
      repeats.push(undefined);
    }
  }
  return { runs, repeats };
}
