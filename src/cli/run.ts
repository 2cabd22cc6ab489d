import type { Command } from 'commander';
import { runBenchmark, type BenchmarkResult, type BenchmarkStartInfo } from '../benchmark/run-benchmark.js';
import { writeRunDataset } from '../benchmark/run-dataset.js';
import { ExitCode } from '../errors/index.js';
import { LiveView } from '../report/progress.js';
import { formatSummary } from '../report/terminal.js';
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
    stop_reason: result.engine.stopReason,
    exit_code: result.exitCode,
    output_dir: result.outputDir,
    files: result.files,
    summary: result.summary,
    per_turn: result.perTurn,
    client_health: result.clientHealth,
    warnings: [...result.engine.warnings, ...result.warnings],
    top_errors: result.topErrors,
  };
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
    const live = new LiveView(err, flags.progress);
    // Every status line goes above the live panel (print clears and redraws it), so a warning never lands inside it.
    const say = (line: string): void => {
      if (!quiet) live.print(line);
    };
    if (plan.outputs.generateOnly) {
      const written = await writeRunDataset(plan, (message) => say(`chatload: warning: ${message}\n`));
      if (written.stats !== undefined) say(`${written.stats}\n`);
      say(`chatload: wrote ${written.conversations.length} conversations from ${written.source} to ${written.file}\n`);
      return;
    }
    const stop = new AbortController();
    const releaseSignals = onStopSignals(() => {
      live.print('\nchatload: stopping: no new requests; in-flight ones get a short grace (Ctrl-C again exits now)\n');
      stop.abort();
    });
    try {
      const result = await runBenchmark(plan, {
        signal: stop.signal,
        onWaitingForServer: (info) => live.waitingForServer(info.url, info.timeoutMs),
        onStart: (info) => {
          say(describeStart(info));
          live.start({ totalRequests: info.requests, durationMs: info.durationMs, rampUpMs: rampUpMsOf(plan) });
        },
        observer: {
          onSend: () => live.onSend(),
          onQueued: (delta) => live.onQueued(delta),
          onPhase: (phase) => live.onPhase(phase),
          onRecord: (record) => {
            live.onRecord(record);
            if (flags.verbose) {
              const what = record.status === 'ok' ? `ttft ${record.ttft_ms} ms, e2el ${record.e2el_ms} ms, ${record.output_num_tokens} tokens` : `${record.error_kind}: ${record.error}`;
              live.print(`${record.conversation_id} turn ${record.turn} (client ${record.client_id}${record.warmup ? ', warmup' : ''}): ${what}\n`);
            }
          },
          onWarning: (message) => say(`chatload: warning: ${message}\n`),
          onContent: flags.printContent
            ? (event) => live.print(`--- ${event.conversationId} turn ${event.turn}\nuser: ${event.user}\nassistant: ${event.answer}\n`)
            : undefined,
        },
      });
      live.stop();
      // --json: stdout carries the one JSON object; the table goes to stderr with the other human text.
      const tableStream = flags.json ? err : process.stdout;
      const color = tableStream.isTTY === true && !process.env.NO_COLOR;
      if (flags.json) process.stdout.write(`${JSON.stringify(jsonSummary(result))}\n`);
      if (!flags.json || !quiet) tableStream.write(
        `${formatSummary(
          {
            summary: result.summary,
            perTurn: result.perTurn,
            clientHealth: result.clientHealth,
            conversations: { ...result.engine.conversations },
            title: `chatload run: ${result.model} (${result.engine.stopReason})`,
            cacheHitRates: result.serverMetrics === null ? undefined : cacheHitRates(result.serverMetrics, result.summary),
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
      live.stop();
      releaseSignals();
    }
  });
}
