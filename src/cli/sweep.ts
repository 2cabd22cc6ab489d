import { Option, type Command } from 'commander';
import * as z from 'zod';
import { describePlan, runSweep, type SweepPlan } from '../benchmark/sweep.js';
import { slosText, type Slos } from '../options/values/slos.js';
import { ConfigError } from '../errors/index.js';
import { addTableOptions, readTableOptions } from '../options/commander.js';
import { fieldsOf, optionsError, problemsOf } from '../options/run-options.js';
import { sweepOptions } from '../options/table/sweep.js';
import { repeatOptions } from '../options/table/outputs.js';
import { fmtNum, fmtPercentileOf } from '../report/html-util.js';
import { LiveView } from '../report/progress.js';
import { cachePressureLine, retentionLine } from '../report/cache-pressure-chart.js';
import { addRunOptions, problemLines, runOptionsFromCommand, terminalFlags } from './run-options.js';
import { onStopSignals } from './signals.js';
import { liveObserver } from './live-observer.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';
import { terminalWidth } from '../report/terminal-width.js';
import { wrapText } from '../report/table-fit.js';

const sweepAndRepeatOptions = { ...sweepOptions, ...repeatOptions };
const sweepSchema = z.object(fieldsOf(sweepAndRepeatOptions)).strict();

/** The sweep's own flags, validated. */
type SweepFlags = z.output<typeof sweepSchema>;

/** The sweep flags of a parsed command, validated (one ConfigError with every problem). */
function sweepFlags(command: Command): SweepFlags {
  const given = readTableOptions(command, sweepAndRepeatOptions);
  const { values, problems } = given;
  const parsed = sweepSchema.safeParse(values);
  const all = [...problems, ...(parsed.success ? [] : problemsOf(parsed.error))];
  if (all.length > 0 || !parsed.success) throw optionsError(problemLines(all, sweepAndRepeatOptions, given));
  return parsed.data;
}

/**
 * `sweep --think-time 0,5,30`: a list of seconds is the sweep's axis, the retention curve (a run's --think-time is one
 * distribution, and keeps that meaning with one value). Taken off the run options, which could not read a list.
 */
function thinkTimeAxis(command: Command): number[] | undefined {
  const raw: unknown = command.getOptionValue('thinkTime');
  if (typeof raw !== 'string' || !raw.includes(',')) return undefined;
  const values = raw.split(',').map((part) => (part.trim() === '' ? Number.NaN : Number(part.trim())));
  if (!values.every((v) => Number.isFinite(v) && v >= 0)) throw new ConfigError(`sweep --think-time: expected comma-separated seconds (0 or more), e.g. 0,5,30; got ${JSON.stringify(raw)}`);
  command.setOptionValue('thinkTime', undefined);
  return values;
}

function planOf(flags: SweepFlags, thinkTimes: number[] | undefined): SweepPlan {
  const chosen = [flags.concurrency !== undefined, flags.sessionRates !== undefined, flags.search, thinkTimes !== undefined].filter(Boolean).length;
  if (chosen !== 1) throw new ConfigError('sweep: give exactly one of --concurrency LIST, --session-rates LIST, --think-time LIST or --search');
  const cachePressure = flags.cachePressure ? { share: flags.kneeShare } : undefined;
  const repeat = flags.repeat > 1 ? flags.repeat : undefined;
  if (thinkTimes !== undefined) return { kind: 'think-time', values: thinkTimes, cachePressure: { share: flags.kneeShare }, repeat };
  if (flags.concurrency) return { kind: 'concurrency', values: flags.concurrency, cachePressure, repeat };
  if (flags.sessionRates) return { kind: 'session-rate', values: flags.sessionRates, cachePressure, repeat };
  // One run per rate keeps the bisection's pass/fail plain; repeat a few fixed rates with --session-rates instead.
  if (flags.repeat > 1) throw new ConfigError('sweep --repeat: not with --search; repeat chosen rates with --session-rates LIST --repeat N');
  if (flags.cachePressure) throw new ConfigError('sweep --cache-pressure: give the load points with --concurrency LIST (or --session-rates LIST)');
  if (flags.minRate === undefined || flags.maxRate === undefined || flags.minRate >= flags.maxRate) {
    throw new ConfigError('sweep --search: give --min-rate and --max-rate with min < max (sessions/s)');
  }
  return { kind: 'search', minRate: flags.minRate, maxRate: flags.maxRate, steps: flags.searchSteps, targetShare: flags.sloShare };
}

/**
 * The answer of --search, with the SLOs it searched against (e.g. `ttft <= 500 ms for 90% of requests`). When the
 * highest rate tried, --max-rate, still met them, the search never found the limit: it says to raise --max-rate.
 */
export function searchLine(plan: Extract<SweepPlan, { kind: 'search' }>, bestRate: number | null, slos: Slos | undefined): string {
  const against = slos === undefined ? 'the SLOs' : `the SLOs (${slosText(slos)} for at least ${Number((plan.targetShare * 100).toFixed(2))}% of requests)`;
  if (bestRate === null) return `no rate met ${against}, not even --min-rate ${plan.minRate}/s: lower --min-rate\n`;
  if (bestRate >= plan.maxRate) {
    return `the highest rate tried, --max-rate ${plan.maxRate}/s, met ${against}: the server's limit is higher; raise --max-rate to find it\n`;
  }
  return `highest session rate that met ${against}: ${bestRate}/s\n`;
}

/** What sweep --help says of the run options it takes but does not list. */
const RUN_OPTIONS_NOTE = [
  'Every `chatload run` option applies to each point (the server, the dataset,',
  "the run's length, --goodput SLOs, --output-dir, --json, -q ...):",
  'see `chatload run --help`.',
  'With a list, --think-time sweeps the think time of open-loop sessions, e.g.',
  '--session-rate 1 --think-time 0,5,30 (the cache retention curve).',
].join('\n');

/** Adds `chatload sweep`: the run options, plus the load points to sweep. */
export function registerSweepCommand(program: Command): void {
  const command = program
    .command('sweep')
    .description(COMMAND_DESCRIPTIONS.sweep)
    .addHelpText('after', `\n${RUN_OPTIONS_NOTE}\n${examplesText('sweep')}`);
  addTableOptions(command, sweepOptions);
  addRunOptions(command);
  addTableOptions(command, repeatOptions);
  // --help names the sweep's own options and points to run's (~80, all accepted here): they stay parsed, unlisted.
  const own = new Set([...Object.values(sweepOptions), ...Object.values(repeatOptions)].map((spec) => new Option(spec.flags).long));
  for (const option of command.options) if (!own.has(option.long)) option.hideHelp();
  command.action(async () => {
    const plan = planOf(sweepFlags(command), thinkTimeAxis(command));
    const { input } = runOptionsFromCommand(command, process.env);
    const { quiet, progress, json, verbose, printContent } = terminalFlags(command);
    // --json: stdout carries one JSON object (sweep.json's document and the files) at the end; the point lines go to
    // stderr with the other human text.
    const stream = json ? process.stderr : process.stdout;
    // A point's line is long: on a narrow terminal it breaks at its commas onto indented lines.
    const width = terminalWidth(stream);
    const out = { write: (text: string) => stream.write(wrapText(text, width)) };
    const live = new LiveView(process.stderr, progress);
    // Status lines go above the live panel, so none lands inside it.
    const say = (line: string): void => {
      if (!quiet) live.print(line);
    };
    const stop = new AbortController();
    const release = onStopSignals(() => stop.abort());
    try {
      say(`chatload sweep: ${describePlan(plan)}\n`);
      // --repeat: each point's line shows means with their 95% interval (the module loads the table library: only then).
      const fmtMean = plan.kind !== 'search' && plan.repeat !== undefined ? (await import('../report/repeats.js')).fmtMeanInterval : undefined;
      const result = await runSweep(input, plan, {
        signal: stop.signal,
        onMetricsServing: (url) => say(`chatload: live metrics at ${url}\n`),
        onPointStart: (p) => live.setHeading(`point ${p.index}${p.atMost ? ` (of at most ${p.total})` : `/${p.total}`}: ${p.kind} ${p.value}`),
        onWaitingForServer: (info) => live.waitingForServer(info.url, info.timeoutMs),
          onServerNotReady: (cause) => live.serverNotReady(cause),
        onStart: (info) => live.start({ totalRequests: info.requests, durationMs: info.durationMs }),
        observer: liveObserver(live, { verbose, printContent }, say),
        onPoint: (p) => {
          const ttft = p.summary.metrics.ttft_ms;
          const goodput = p.summary.goodput ? `, goodput ${fmtNum(p.summary.goodput.share * 100, 1)}%` : '';
          live.stop();
          if (p.repeats !== undefined && fmtMean !== undefined) {
            const m = (key: string): string => fmtMean(p.repeats!.intervals, key);
            out.write(
              `${p.kind} ${p.value} (mean ± 95% CI of ${p.repeats.runs.length}): ${m('request_throughput')} req/s, TTFT p50 ${m('ttft p50')} ms p99 ${m('ttft p99')} ms, ` +
                `TPOT p50 ${m('tpot p50')} ms, E2EL p50 ${m('e2el p50')} ms${goodput}\n`,
            );
            return;
          }
          out.write(
            `${p.kind} ${p.value}: ${fmtNum(p.summary.request_throughput)} req/s, TTFT p50 ${fmtNum(ttft?.p50)} ms p99 ${fmtPercentileOf(ttft, 99)} ms, ` +
              `TPOT p50 ${fmtNum(p.summary.metrics.tpot_ms?.p50)} ms, E2EL p50 ${fmtNum(p.summary.metrics.e2el_ms?.p50)} ms${goodput}\n`,
          );
        },
      });
      if (result.cachePressure !== null && plan.kind === 'think-time') out.write(`${retentionLine(result.cachePressure.knee)}\n`);
      else if (result.cachePressure !== null) out.write(`${cachePressureLine(result.cachePressure.knee, plan.kind === 'concurrency' ? 'concurrent conversations' : 'sessions/s')}\n`);
      if (plan.kind === 'search') out.write(searchLine(plan, result.bestRate, result.points[0]?.summary.goodput?.slos));
      if (json) process.stdout.write(`${JSON.stringify({ ...result.document, output_dir: result.outputDir, files: result.files })}\n`);
      say(`chatload: wrote ${result.files.summary}, ${result.files.html}\n`);
    } finally {
      live.stop();
      release();
    }
  });
}
