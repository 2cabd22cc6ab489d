import type { Command } from 'commander';
import { runBenchmark, type BenchmarkHooks, type BenchmarkResult, type BenchmarkStartInfo } from '../benchmark/run-benchmark.js';
import { writeRunDataset } from '../benchmark/run-dataset.js';
import { withLiveMetrics } from '../benchmark/live-metrics-hooks.js';
import { ExitCode } from '../errors/index.js';
import { LiveView } from '../report/progress.js';
import { join } from 'node:path';
import * as z from 'zod';
import { addTableOptions, readTableOptions } from '../options/commander.js';
import { fieldsOf, optionsError, PARSE_ONCE, problemsOf } from '../options/run-options.js';
import { repeatOptions } from '../options/table/outputs.js';
import { defaultOutputDir, indexedFile } from '../store/output-dir.js';
import { writeRepeats } from '../benchmark/repeats.js';
import { addRunOptions, problemLines, runOptionsFromCommand, terminalFlags, type TerminalFlags } from './run-options.js';
import { onStopSignals } from './signals.js';
import { liveObserver } from './live-observer.js';
import { escapeControl } from '../util/control-chars.js';
import { cacheHitRates } from '../server-metrics/compare.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';
import { stopText } from '../report/stop-text.js';
import { terminalWidth } from '../report/terminal-width.js';
import { fmtNum } from '../report/html-util.js';
import { counted } from '../util/plural.js';

/** Why the run exits 1, and its most frequent error messages. */
function failureLines(result: BenchmarkResult, maxErrorRate: number): string {
  const s = result.summary;
  const aborted = s.failed_by_kind.aborted;
  const lines =
    s.completed === 0 && result.topErrors.length > 0
      ? ['chatload: every request failed (warmup included): nothing was measured']
      : [`chatload: ${s.failed - aborted} of ${s.completed + s.failed - aborted} requests failed, over --max-error-rate ${maxErrorRate}` +
          (aborted > 0 ? ` (${aborted} cut by the run's stop not counted)` : '')];
  for (const e of result.topErrors) lines.push(`  ${e.count} × ${e.kind}: ${escapeControl(e.message)}`);
  return `${lines.join('\n')}\n`;
}

/** The ramp-up's length (ms) when the load has one: the live view calls that first stretch "ramp-up". */
function rampUpMsOf(plan: BenchmarkResult['plan']): number | undefined {
  const model = plan.load.model;
  const seconds = model.type === 'open-sessions' ? model.arrivals.rampUp?.seconds : undefined;
  return seconds === undefined ? undefined : seconds * 1000;
}

/** --json's object: what ran, where its files are, the exit code and the summary (as results.json has it). */
function jsonSummary(result: BenchmarkResult): Record<string, unknown> {
  return {
    model: result.model,
    url: result.url,
    engine: result.serverEngine,
    stop_reason: result.load.stopReason,
    exit_code: result.exitCode,
    output_dir: result.outputDir,
    files: result.files,
    summary: result.summary,
    per_turn: result.perTurn,
    client_health: result.clientHealth,
    warnings: [...result.load.warnings, ...result.warnings],
    top_errors: result.topErrors,
  };
}

function describeStart(info: BenchmarkStartInfo): string {
  const engine = info.engine.name === 'unknown' ? '' : ` (${info.engine.name}${info.engine.version === null ? '' : ` ${info.engine.version}`})`;
  const server = info.embeddedSimulator ? `the built-in simulator at ${info.url}` : `${info.url}${engine}`;
  // The engine's version and the model's name may come from the server: escaped for the terminal.
  return escapeControl(`chatload: ${counted(info.conversations, 'conversation')} from ${info.dataset} against ${server}, model ${info.model}; load ${info.load}; results in ${info.outputDir}`) + '\n';
}

/** Where the summary table goes: stdout, or stderr with --json (stdout then carries the one JSON object). */
function tableStreamOf(flags: TerminalFlags): NodeJS.WriteStream {
  return flags.json ? process.stderr : process.stdout;
}

/** A finished run's output: --json's object on stdout, the summary table (stdout, or stderr with --json), the files. */
async function printResult(result: BenchmarkResult, flags: TerminalFlags, say: (line: string) => void): Promise<void> {
  const tableStream = tableStreamOf(flags);
  const color = tableStream.isTTY === true && !process.env.NO_COLOR;
  if (flags.json) process.stdout.write(`${JSON.stringify(jsonSummary(result))}\n`);
  if (!flags.json || !flags.quiet) {
    // Loaded at the end: the table library is not needed before the first request (issue 17).
    const { formatSummary } = await import('../report/terminal.js');
    tableStream.write(
      `${formatSummary(
        {
          summary: result.summary,
          perTurn: result.perTurn,
          clientHealth: result.clientHealth,
          conversations: { ...result.load.conversations },
          title: `chatload run: ${result.model} (${stopText(result.load.stopReason, result.load.conversations)})`,
          cacheHitRates: result.serverMetrics === null ? undefined : cacheHitRates(result.serverMetrics, result.summary),
          prefixCache: result.prefixCache,
          replicas: result.replicas,
          gpu: result.gpu,
        },
        { color, width: terminalWidth(tableStream) },
      )}\n`,
    );
  }
  say(`chatload: wrote ${Object.values(result.files).join(', ')}\n`);
}

/**
 * --repeat: one repetition's line in place of its full summary (the table of intervals follows the series), e.g.
 * `repetition 1/3: completed 8, failed 0, 3.21 req/s, TTFT p50 41.20 ms, E2EL p50 412.00 ms -> out/repeat-1`.
 */
function repetitionLine(index: number, repeat: number, result: BenchmarkResult): string {
  const s = result.summary;
  const figures = `completed ${s.completed}, failed ${s.failed}, ${fmtNum(s.request_throughput)} req/s, TTFT p50 ${fmtNum(s.metrics.ttft_ms?.p50)} ms, E2EL p50 ${fmtNum(s.metrics.e2el_ms?.p50)} ms`;
  return escapeControl(`repetition ${index}/${repeat}: ${figures} -> ${result.outputDir}`) + '\n';
}

/** After --repeat's series: repeats.json and repeats.html in `baseDir`, and the one table of intervals. */
async function finishRepeats(baseDir: string, repeat: number, results: readonly BenchmarkResult[], flags: TerminalFlags, say: (line: string) => void): Promise<void> {
  const { intervals, files } = await writeRepeats(baseDir, repeat, results);
  const { formatRepeatIntervals } = await import('../report/repeats.js'); // the table library: at the end
  const tableStream = tableStreamOf(flags);
  if (!flags.json || !flags.quiet) tableStream.write(formatRepeatIntervals(intervals, results.length, terminalWidth(tableStream)));
  say(`chatload: wrote ${files.json}, ${files.html}\n`);
}

/** --repeat, validated (one ConfigError naming the flag). */
function repeatCount(command: Command): { repeat: number } {
  const given = readTableOptions(command, repeatOptions);
  const { values, problems } = given;
  const parsed = repeatSchema.safeParse(values, PARSE_ONCE);
  const all = [...problems, ...(parsed.success ? [] : problemsOf(parsed.error))];
  if (all.length > 0 || !parsed.success) throw optionsError(problemLines(all, repeatOptions, given));
  return parsed.data;
}

const repeatSchema = z.object(fieldsOf(repeatOptions)).strict();

/** Adds `chatload run`. `setExitCode` receives the run's exit code (0 ok, 1 errors over --max-error-rate, 130 interrupted). */
export function registerRunCommand(program: Command, setExitCode: (code: number) => void): void {
  const command = program
    .command('run')
    .description(COMMAND_DESCRIPTIONS.run)
    .addHelpText('after', examplesText('run'));
  addTableOptions(addRunOptions(command), repeatOptions);
  command.action(async () => {
    const flags = terminalFlags(command);
    const { input, plan } = runOptionsFromCommand(command, process.env);
    const quiet = flags.quiet;
    const err = process.stderr;
    const live = new LiveView(err, flags.progress);
    // Every status line goes above the live panel (print clears and redraws it), so a warning never lands inside it.
    const say = (line: string): void => {
      if (!quiet) live.print(line);
    };
    if (plan.outputs.generateOnly) {
      const written = await writeRunDataset(plan, (message) => say(`chatload: warning: ${message}\n`));
      if (written.stats !== undefined) say(`${written.stats}\n`);
      say(`chatload: wrote ${counted(written.conversations.length, 'conversation')} from ${written.source} to ${written.file}\n`);
      return;
    }
    const { repeat } = repeatCount(command);
    // --metrics-port: one server for every repetition (a port in use ends the command here, before any work).
    const metrics = await withLiveMetrics<BenchmarkHooks>(plan.outputs.metricsPort, { onMetricsServing: (url: string) => say(`chatload: live metrics at ${url}\n`) });
    const stop = new AbortController();
    const releaseSignals = onStopSignals(() => {
      live.print('\nchatload: stopping: no new requests; in-flight ones get a short grace (Ctrl-C again exits now)\n');
      stop.abort();
    });
    // --repeat n: the same benchmark n times, each in its own folder under --output-dir, then the intervals.
    const baseDir = plan.outputs.outputDir ?? defaultOutputDir();
    const results: BenchmarkResult[] = [];
    try {
      for (let i = 1; i <= repeat && !stop.signal.aborted; i++) {
        if (repeat > 1) live.setHeading(`repetition ${i}/${repeat}`);
        metrics.hooks.liveMetrics?.setRun({ point: 'run', repetition: String(i) });
        // --llmd-report: one report per repetition (`_1` … `_N` before the extension).
        const llmdReport = input.llmdReport === undefined ? undefined : indexedFile(input.llmdReport, String(i));
        const runInput = repeat === 1 ? plan : { ...input, outputDir: join(baseDir, `repeat-${i}`), llmdReport };
        const result = await runBenchmark(runInput, {
          ...metrics.hooks,
          signal: stop.signal,
          onWaitingForServer: (info) => live.waitingForServer(info.url, info.timeoutMs),
          onServerNotReady: (cause) => live.serverNotReady(cause),
          onStart: (info) => {
            say(describeStart(info));
            live.start({ totalRequests: info.requests, durationMs: info.durationMs, rampUpMs: rampUpMsOf(plan) });
          },
          observer: liveObserver(live, flags, say),
        });
        live.stop();
        results.push(result);
        // --repeat: a line per repetition (--json still prints each one's object), then one table of intervals.
        if (repeat === 1) await printResult(result, flags, say);
        else if (flags.json) process.stdout.write(`${JSON.stringify(jsonSummary(result))}\n`);
        if (repeat > 1 && (!flags.json || !flags.quiet)) tableStreamOf(flags).write(repetitionLine(i, repeat, result));
        if (result.exitCode !== ExitCode.ok) break; // a failed or interrupted repetition ends the series
      }
      if (repeat > 1 && results.length > 0) await finishRepeats(baseDir, repeat, results, flags, say);
      const last = results.at(-1);
      if (last !== undefined) {
        // Why the exit code is 1 is printed even with -q: a quiet run that fails must still say why.
        if (last.exitCode === ExitCode.runFailed) err.write(failureLines(last, plan.summary.maxErrorRate));
        setExitCode(last.exitCode);
      }
    } finally {
      live.stop();
      releaseSignals();
      await metrics.close();
    }
  });
}
