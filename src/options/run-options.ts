import * as z from 'zod';
import { concurrencyBound, workersBound } from './machine-bounds.js';
import { ConfigError } from '../errors/config-error.js';
import { longFlag, type OptionSpec, type OptionTable } from './define.js';
import type { RunOptionsInput } from './run-options-input.js';
import { datasetOptions } from './table/dataset.js';
import { limitOptions } from './table/limits.js';
import { loadOptions } from './table/load.js';
import { outputOptions } from './table/outputs.js';
import { prefixCacheOptions } from './table/prefix-cache.js';
import { requestOptions } from './table/requests.js';
import { scaleOptions } from './table/scale.js';
import { simulatorOptions } from './table/simulator.js';
import { targetOptions } from './table/target.js';

/*
 * The options of `chatload run`, shared by the CLI (run, sweep) and the library API: one table (./table/*.ts, one
 * file per help group), one zod schema made from it, validated once. Names are the camelCase of the reference tool's
 * flags (--num-clients → numClients), except where a unit is added (--duration → durationSec).
 */

/** Every run option, by key, in --help order. */
export const RUN_OPTIONS = {
  ...targetOptions,
  ...datasetOptions,
  ...requestOptions,
  ...loadOptions,
  ...limitOptions,
  ...outputOptions,
  ...prefixCacheOptions,
  ...scaleOptions,
  ...simulatorOptions,
};

type Fields<T extends Record<string, OptionSpec>> = { [K in keyof T]: T[K]['field'] };

/** The zod object shape of a table: each option's schema with its default. */
export function fieldsOf<T extends Record<string, OptionSpec>>(table: T): Fields<T> {
  return Object.fromEntries(Object.entries(table).map(([key, spec]) => [key, spec.field])) as Fields<T>;
}

const objectSchema = z.object(fieldsOf(RUN_OPTIONS)).strict();

/** True when the options select open-loop sessions (--session-rate or --ramp-up) rather than the closed loop. */
export function isOpenLoop(options: { sessionRate?: number; rampUp?: unknown }): boolean {
  return options.sessionRate !== undefined || options.rampUp !== undefined;
}

/** Concurrency and threads past what this machine holds: refused before anything is allocated. */
function machineChecks(o: z.output<typeof objectSchema>, problem: (key: keyof typeof RUN_OPTIONS, message: string) => void): void {
  const concurrency = concurrencyBound();
  // A shard holds its share of -p and --max-concurrency.
  const share = (n: number): number => Math.ceil(n / (o.shard?.count ?? 1));
  if (share(o.numClients) > concurrency.max) problem('numClients', `expected at most ${concurrency.max} per machine: ${concurrency.why}`);
  if (o.maxConcurrency !== undefined && share(o.maxConcurrency) > concurrency.max) problem('maxConcurrency', `expected at most ${concurrency.max} per machine: ${concurrency.why}`);
  const workers = workersBound();
  if (typeof o.workers === 'number' && o.workers > workers.max) problem('workers', `expected at most ${workers.max}: ${workers.why}`);
}

/** Rules between options, on their typed values (each option's own rules are in the table). */
function crossChecks(o: z.output<typeof objectSchema>, ctx: z.RefinementCtx): void {
  const problem = (key: keyof typeof RUN_OPTIONS, message: string): void => ctx.addIssue({ code: 'custom', path: [key], message });
  const limited = o.limitMinTokens > 0 || o.limitMaxTokens > 0;
  if (limited && (o.limitMinTokens < 1 || o.limitMaxTokens < 1)) problem('limitMinTokens', 'set both --limit-min-tokens and --limit-max-tokens to positive values');
  else if (limited && o.limitMinTokens > o.limitMaxTokens) problem('limitMinTokens', `must not exceed --limit-max-tokens (${o.limitMaxTokens})`);
  if (o.maxActiveConversations !== undefined && o.maxActiveConversations < o.numClients) {
    problem('maxActiveConversations', `must be at least --num-clients (${o.numClients}), so that every client has a conversation`);
  }
  machineChecks(o, problem);
  const openLoop = isOpenLoop(o);
  // --max-concurrency also caps a trace replay; whether -i is a trace is known once it is read (benchmark/ checks it then).
  if (!openLoop && o.thinkTime !== undefined) problem('thinkTime', 'applies to open-loop sessions: add --session-rate (or --ramp-up)');
  if (!openLoop && o.maxConcurrency !== undefined && o.inputFile === undefined) {
    problem('maxConcurrency', 'applies to open-loop sessions and trace replay: add --session-rate (or --ramp-up), or replay a trace with -i');
  }
  if (o.responsesState === 'server' && o.endpoint !== 'responses') problem('responsesState', 'applies to --endpoint responses');
  if (o.responsesState === 'server' && o.replayDatasetAnswers) {
    problem('responsesState', "server keeps the server's own answers in the history: --replay-dataset-answers cannot replace them");
  }
  if (openLoop && o.inputFormat !== undefined) problem('inputFormat', 'a trace is replayed at its own timestamps: drop --session-rate and --ramp-up');
  if (o.resume && o.overwrite) problem('resume', 'continues the run in --output-dir; --overwrite replaces it: give one');
  if (o.resume && o.outputDir === undefined) problem('resume', 'needs the --output-dir of the run to continue');
  if (o.resume && o.outputFile !== undefined) problem('resume', "cannot write -o: the interrupted run's answers are not on disk");
  if (o.resume && o.shard !== undefined) problem('resume', 'cannot continue a shard: resume each shard as a whole run, or rerun it');
  // Flags that would change nothing are said so (issue #35), as --think-time is: a user who gave one expects an effect.
  if (o.inputFile === undefined && o.columns !== undefined) problem('columns', 'maps the columns of a Hugging Face dataset: add -i');
  if (o.inputFile === undefined && o.split !== undefined) problem('split', 'picks the split of a Hugging Face dataset folder: add -i');
  if (o.maxQueue !== undefined && o.maxConcurrency === undefined) problem('maxQueue', 'bounds the wait for a --max-concurrency slot: add --max-concurrency');
  if (!openLoop && o.burstiness !== 1) problem('burstiness', 'shapes open-loop arrivals: add --session-rate (or --ramp-up)');
  if (openLoop && o.requestRate > 0) problem('requestRate', 'paces closed-loop clients; with --session-rate the arrivals set the pace');
  if (o.rampUp !== undefined && o.sessionRate !== undefined && o.rampUp.endPerSec !== o.sessionRate) {
    problem('rampUp', `ends at ${o.rampUp.endPerSec}/s but --session-rate is ${o.sessionRate}/s; give one or make them agree`);
  }
}

/** The schema of the run options: every option's validation and default, the rules between them, typed values out. */
export const runOptionsSchema = objectSchema.superRefine(crossChecks);

export type { RunOptionsInput };

/** The schema's input type; the library's `RunOptionsInput` (run-options-input.ts) spells it out without zod. */
export type RunOptionsSchemaInput = z.input<typeof runOptionsSchema>;
/** True when A and B are the same type (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// A table change without `npm run docs:options` (which regenerates run-options-input.ts) fails the typecheck here.
// (Same keys too: with every property optional, an interface missing one would still be assignable both ways.)
const inputTypeIsTheSchemas: Same<RunOptionsInput, RunOptionsSchemaInput> & Same<keyof RunOptionsInput, keyof RunOptionsSchemaInput> = true;
void inputTypeIsTheSchemas;
/** Validated, defaulted run options, with typed values (parsed SLOs, ramp-up, shard, think-time spec, ...). */
export type RunOptions = Readonly<z.output<typeof runOptionsSchema>>;

/** True for the built-in demo: no --url (the built-in simulator) and no -i (the demo dataset). */
export function isBuiltInDemo(input: { url?: unknown; inputFile?: unknown }): boolean {
  return input.url === undefined && input.inputFile === undefined;
}

/** The input with the table's demo defaults filled in, for the built-in demo (see OptionText.demoDefault). */
export function withDemoDefaults<T extends Record<string, unknown>>(input: T, table: OptionTable): T {
  if (!isBuiltInDemo(input)) return input;
  const out: Record<string, unknown> = { ...input };
  for (const [key, spec] of Object.entries(table)) {
    const demo = spec.demoDefault;
    if (demo === undefined || input[key] !== undefined) continue;
    if (demo.unlessGiven === undefined || input[demo.unlessGiven] === undefined) out[key] = demo.value;
  }
  return out as T;
}

/** `numClients` → `--num-clients`: the flag a CLI user typed for an option key (kebab-case for keys of no option). */
export function flagName(key: string, table: OptionTable = RUN_OPTIONS): string {
  const spec = table[key];
  return spec === undefined ? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : longFlag(spec);
}

/** One problem with some options: the key of the option it is about (none for the whole), and what is wrong. */
export interface OptionProblem {
  key?: string;
  message: string;
}

/** Zod's issues as problems, one per issue. */
export function problemsOf(error: z.ZodError): OptionProblem[] {
  return error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') return { message: `unknown option(s) ${issue.keys.map((key) => flagName(key)).join(', ')}` };
    return issue.path.length > 0 ? { key: String(issue.path[0]), message: issue.message } : { message: issue.message };
  });
}

/** One problem as the error shows it: `--num-clients: expected a positive integer`. `where` names a key's source (env). */
export function formatProblem(problem: OptionProblem, table: OptionTable = RUN_OPTIONS, where: (key: string) => string = () => ''): string {
  return problem.key === undefined ? problem.message : `${flagName(problem.key, table)}${where(problem.key)}: ${problem.message}`;
}

/** Every problem in one ConfigError, one `flag: problem` each (on one line, as every chatload error). */
export function optionsError(problems: readonly string[]): ConfigError {
  return new ConfigError(`invalid options: ${problems.join('; ')}`, { problems });
}

/**
 * Zod's parse options for a schema parsed once per command: without its fast path. zod 4 compiles an object schema's
 * parser with `new Function` on its first parse, which pays only over many parses; for the run options (one parse
 * of ~100 fields) that compile took half the parse: 8 -> 4 ms of CPU at every start (issue 17). Same result.
 */
export const PARSE_ONCE = { jitless: true } as const;

/** The outcome of validating run options: typed options and the options as given (defaulted), or every problem. */
export type RunOptionsCheck =
  | { ok: true; options: RunOptions; given: Readonly<Record<string, unknown>>; defaulted: readonly string[]; notes: readonly string[] }
  | { ok: false; problems: OptionProblem[] };

/**
 * Validates and defaults run options (the demo's defaults included) without throwing. `given` is what the caller
 * gave, with the defaults, in the form given (`--goodput ttft:200`, not the parsed SLO): what results.json records;
 * `defaulted` names its keys whose values are defaults (chatload's, or the built-in demo's), not the caller's.
 */
export function checkRunOptions(input: RunOptionsInput): RunOptionsCheck {
  const withDemo = withDemoDefaults(input as Record<string, unknown>, RUN_OPTIONS);
  const parsed = runOptionsSchema.safeParse(withDemo, PARSE_ONCE);
  if (!parsed.success) return { ok: false, problems: problemsOf(parsed.error) };
  const given: Record<string, unknown> = {};
  const defaulted: string[] = [];
  for (const [key, spec] of Object.entries(RUN_OPTIONS)) {
    const value = withDemo[key] ?? spec.default;
    if (value === undefined) continue;
    given[key] = value;
    if ((input as Record<string, unknown>)[key] === undefined) defaulted.push(key);
  }
  return { ok: true, options: Object.freeze(parsed.data), given: Object.freeze(given), defaulted: Object.freeze(defaulted), notes: Object.freeze(optionNotes(input)) };
}

/**
 * Options given that do less than they say, yet something (so not refused as crossChecks refuses a flag that would
 * change nothing): warnings a run says at its start. Judged on the input as given, so a default (or the demo's
 * 16 clients) is never named.
 */
export function optionNotes(input: RunOptionsInput): string[] {
  const notes: string[] = [];
  if (input.numClients !== undefined && isOpenLoop(input)) {
    const by = input.sessionRate !== undefined ? '--session-rate' : '--ramp-up';
    // -p still sizes the warmup step (load/run-load.ts), whatever the load model.
    const what = input.warmupStep === true ? "sets only --warmup-step's concurrency" : 'is ignored';
    notes.push(`-p/--num-clients ${input.numClients} ${what} with ${by}: sessions arrive at its rate, each with its own requests (--max-concurrency caps those in flight)`);
  }
  return notes;
}

/** Validates and defaults run options. Throws one ConfigError that lists every problem. */
export function normalizeRunOptions(input: RunOptionsInput): RunOptions {
  const check = checkRunOptions(input);
  if (!check.ok) throw optionsError(check.problems.map((p) => formatProblem(p)));
  return check.options;
}
