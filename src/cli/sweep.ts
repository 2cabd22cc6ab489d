import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { describePlan, runSweep, type SweepPlan } from '../benchmark/sweep.js';
import { ConfigError } from '../errors/index.js';
import { fmtNum } from '../report/html-util.js';
import { positiveInt, positiveNumber } from './parse.js';
import { addRunOptions, flagsToRunOptions, type RunFlags } from './run-options.js';
import { onStopSignals } from './signals.js';

interface SweepFlags extends RunFlags {
  concurrency?: number[];
  sessionRates?: number[];
  search?: boolean;
  minRate?: number;
  maxRate?: number;
  searchSteps: number;
  sloShare: number;
}

function positiveList(value: string): number[] {
  const values = value.split(',').map((part) => Number(part.trim()));
  if (values.length === 0 || values.some((v) => !Number.isFinite(v) || v <= 0)) throw new InvalidArgumentError('expected comma-separated positive numbers, e.g. 1,4,16.');
  return values;
}

function planOf(flags: SweepFlags): SweepPlan {
  const chosen = [flags.concurrency !== undefined, flags.sessionRates !== undefined, flags.search === true].filter(Boolean).length;
  if (chosen !== 1) throw new ConfigError('sweep: give exactly one of --concurrency LIST, --session-rates LIST or --search');
  if (flags.concurrency) {
    if (flags.concurrency.some((v) => !Number.isInteger(v))) throw new ConfigError('sweep --concurrency: expected whole numbers of clients');
    return { kind: 'concurrency', values: flags.concurrency };
  }
  if (flags.sessionRates) return { kind: 'session-rate', values: flags.sessionRates };
  if (flags.minRate === undefined || flags.maxRate === undefined || flags.minRate >= flags.maxRate) {
    throw new ConfigError('sweep --search: give --min-rate and --max-rate with min < max (sessions/s)');
  }
  return { kind: 'search', minRate: flags.minRate, maxRate: flags.maxRate, steps: flags.searchSteps, targetShare: flags.sloShare };
}

/** Adds `chatload sweep`: the run options, plus the load points to sweep. */
export function registerSweepCommand(program: Command): void {
  const command = program
    .command('sweep')
    .description('Run a series of load points (clients or session rates), or search for the highest session rate that meets the --goodput SLOs; writes each run, sweep.json and sweep.html.')
    .option('--concurrency <list>', 'closed-loop client counts, e.g. 1,4,16', positiveList)
    .option('--session-rates <list>', 'open-loop session rates (sessions/s), e.g. 1,2,4', positiveList)
    .option('--search', 'bisect the session rate between --min-rate and --max-rate for the highest that meets the SLOs')
    .option('--min-rate <r>', 'lowest session rate of --search', positiveNumber)
    .option('--max-rate <r>', 'highest session rate of --search', positiveNumber)
    .option('--search-steps <n>', 'bisection steps of --search', positiveInt, 5)
    .option('--slo-share <fraction>', 'share of requests that must meet the SLOs for a rate to pass', positiveNumber, 0.9);
  addRunOptions(command);
  command.action(async (flags: SweepFlags) => {
    const plan = planOf(flags);
    const say = (line: string): void => {
      if (!flags.quiet) process.stderr.write(line);
    };
    const stop = new AbortController();
    const release = onStopSignals(() => stop.abort());
    try {
      say(`chatload sweep: ${describePlan(plan)}\n`);
      const result = await runSweep(flagsToRunOptions(flags, process.env), plan, {
        signal: stop.signal,
        observer: { onWarning: (m) => say(`chatload: warning: ${m}\n`) },
        onPoint: (p) => {
          const ttft = p.summary.metrics.ttft_ms;
          const goodput = p.summary.goodput ? `, goodput ${fmtNum(p.summary.goodput.share * 100, 1)}%` : '';
          process.stdout.write(
            `${p.kind} ${p.value}: ${fmtNum(p.summary.request_throughput)} req/s, TTFT p50 ${fmtNum(ttft?.p50)} ms p99 ${fmtNum(ttft?.p99)} ms, E2EL p50 ${fmtNum(p.summary.metrics.e2el_ms?.p50)} ms${goodput}\n`,
          );
        },
      });
      if (plan.kind === 'search') {
        process.stdout.write(result.bestRate === null ? 'no rate met the SLOs, not even --min-rate\n' : `highest session rate that met the SLOs: ${result.bestRate}/s\n`);
      }
      say(`chatload: wrote ${result.files.summary}, ${result.files.html}\n`);
    } finally {
      release();
    }
  });
}
