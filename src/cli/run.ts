import type { Command } from 'commander';
import { runBenchmark, type BenchmarkResult, type BenchmarkStartInfo } from '../benchmark/run-benchmark.js';
import { writeRunDataset } from '../benchmark/run-dataset.js';
import { ExitCode } from '../errors/index.js';
import { ProgressLine } from '../report/progress.js';
import { addRunOptions, runOptionsFromCommand, terminalFlags } from './run-options.js';
import { onStopSignals } from './signals.js';
import { cacheHitRates } from '../server-metrics/compare.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';

/** Why the run exits 1, and its most frequent error messages. */
function failureLines(result: BenchmarkResult, maxErrorRate: number): string {
  const s = result.summary;
  const aborted = s.failed_by_kind.aborted;
  const lines =
    s.completed === 0 && result.topErrors.length > 0
      ? ['chatload: every request failed (warmup included): nothing was measured']
      : [`chatload: ${s.failed - aborted} of ${s.completed + s.failed - aborted} requests failed, over --max-error-rate ${maxErrorRate}` +
          (aborted > 0 ? ` (${aborted} cut by the run's stop not counted)` : '')];
  for (const e of result.topErrors) lines.push(`  ${e.count} × ${e.kind}: ${e.message}`);
  return `${lines.join('\n')}\n`;
}

function describeStart(info: BenchmarkStartInfo): string {
  const engine = info.engine.name === 'unknown' ? '' : ` (${info.engine.name}${info.engine.version === null ? '' : ` ${info.engine.version}`})`;
  const server = info.embeddedSimulator ? `the built-in simulator at ${info.url}` : `${info.url}${engine}`;
  return `chatload: ${info.conversations} conversations from ${info.dataset} against ${server}, model ${info.model}; results in ${info.outputDir}\n`;
}

/** Adds `chatload run`. `setExitCode` receives the run's exit code (0 ok, 1 errors over --max-error-rate, 130 interrupted). */
export function registerRunCommand(program: Command, setExitCode: (code: number) => void): void {
  const command = program
    .command('run')
    .description(COMMAND_DESCRIPTIONS.run);
  addRunOptions(command);
  command.action(async () => {
    const flags = terminalFlags(command);
    const { plan } = runOptionsFromCommand(command, process.env);
    const quiet = flags.quiet;
    const err = process.stderr;
    const progress = !quiet && err.isTTY ? { line: undefined as ProgressLine | undefined } : undefined;
    const say = (line: string): void => {
      // Clear the live progress line first, so a status line never lands in the middle of it.
      if (!quiet) err.write(progress?.line ? `\r\x1b[2K${line}` : line);
    };
    if (plan.outputs.generateOnly) {
      const written = await writeRunDataset(plan, (message) => say(`chatload: warning: ${message}\n`));
      if (written.stats !== undefined) say(`${written.stats}\n`);
      say(`chatload: wrote ${written.conversations.length} conversations from ${written.source} to ${written.file}\n`);
      return;
    }
    const stop = new AbortController();
    const releaseSignals = onStopSignals(() => {
      err.write('\nchatload: stopping: no new requests; in-flight ones get a short grace (Ctrl-C again exits now)\n');
      stop.abort();
    });
    try {
      const result = await runBenchmark(plan, {
        signal: stop.signal,
        onStart: (info) => {
          say(describeStart(info));
          if (progress) progress.line = new ProgressLine(err, { total: plan.load.maxNumRequests });
        },
        observer: {
          onRecord: (record) => {
            progress?.line?.onRecord(record);
            if (flags.verbose) {
              const what = record.status === 'ok' ? `ttft ${record.ttft_ms} ms, e2el ${record.e2el_ms} ms, ${record.output_num_tokens} tokens` : `${record.error_kind}: ${record.error}`;
              err.write(`${record.conversation_id} turn ${record.turn} (client ${record.client_id}${record.warmup ? ', warmup' : ''}): ${what}\n`);
            }
          },
          onWarning: (message) => say(`chatload: warning: ${message}\n`),
          onContent: flags.printContent
            ? (event) => err.write(`--- ${event.conversationId} turn ${event.turn}\nuser: ${event.user}\nassistant: ${event.answer}\n`)
            : undefined,
        },
      });
      progress?.line?.stop();
      const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
      // Loaded at the end: the table library is not needed before the first request (issue 17).
      const { formatSummary } = await import('../report/terminal.js');
      process.stdout.write(
        `${formatSummary(
          {
            summary: result.summary,
            perTurn: result.perTurn,
            clientHealth: result.clientHealth,
            conversations: { ...result.engine.conversations },
            title: `chatload run: ${result.model} (${result.engine.stopReason})`,
            cacheHitRates: result.serverMetrics === null ? undefined : cacheHitRates(result.serverMetrics, result.summary),
            prefixCache: result.prefixCache,
          },
          { color },
        )}\n`,
      );
      const written = Object.values(result.files).join(', ');
      say(`chatload: wrote ${written}\n`);
      // Why the exit code is 1 is printed even with -q: a quiet run that fails must still say why.
      if (result.exitCode === ExitCode.runFailed) err.write(failureLines(result, plan.summary.maxErrorRate));
      setExitCode(result.exitCode);
    } finally {
      progress?.line?.stop();
      releaseSignals();
    }
  });
}
