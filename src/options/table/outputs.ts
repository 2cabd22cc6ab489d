import * as z from 'zod';
import { option, parsedWith, readInt, readPercentList, readWordList, text } from '../define.js';
import { parseSlos } from '../values/slos.js';

const PORT_EXPECTED = 'expected a TCP port, a whole number from 0 to 65535';

/** The files a run writes, and the summaries in them. */
export const outputOptions = {
  outputDir: option({
    flags: '--output-dir <dir>',
    group: 'outputs',
    help: 'folder for requests.jsonl and results.json',
    defaultText: './chatload-results/<UTC timestamp>',
    schema: text,
  }),
  outputFile: option({
    flags: '-o, --output-file <path>',
    group: 'outputs',
    help: "write the finished conversations with the server's answers (reference format)",
    schema: text,
  }),
  overwrite: option({
    flags: '--overwrite',
    group: 'outputs',
    help: 'replace a previous run in --output-dir (its requests.jsonl, results.json and reports are removed first); without it such a folder is refused',
    schema: z.boolean(),
    default: false,
  }),
  resume: option({
    flags: '--resume',
    group: 'outputs',
    help: "continue the interrupted run in --output-dir: finished conversations are skipped, unfinished ones restart at their first unfinished turn (the history uses the dataset's recorded answers)",
    schema: z.boolean(),
    default: false,
  }),
  generateOnly: option({
    flags: '--generate-only',
    group: 'outputs',
    help: 'write the dataset the run would replay (a generation config generated) to -o, or conversations.json in the output folder, and exit without contacting a server',
    schema: z.boolean(),
    default: false,
  }),
  statsJsonOutput: option({
    flags: '--stats-json-output <file>',
    group: 'outputs',
    help: "also write the reference's per-request stats list to this file",
    schema: text,
  }),
  llmdReport: option({
    flags: '--llmd-report <file>',
    group: 'outputs',
    help: "also write llm-d-benchmark's benchmark report (BR v0.2, as JSON, which llm-d reads as YAML) to this file, so chatload can run as an llm-d harness; --repeat and sweep write one per run, numbered before the extension (docs/REPORTS.md)",
    schema: text,
  }),
  metricsPort: option({
    flags: '--metrics-port <port>',
    group: 'outputs',
    help: "serve the run's live metrics as Prometheus text on 127.0.0.1:<port>/metrics while it runs (0: a free port, said at the start; docs/REPORTS.md)",
    read: readInt,
    schema: z.number({ error: PORT_EXPECTED }).int(PORT_EXPECTED).min(0, PORT_EXPECTED).max(65535, PORT_EXPECTED),
  }),
  report: option({ flags: '--no-report', group: 'outputs', help: 'do not write report.html', schema: z.boolean(), default: true }),
  excelOutput: option({
    flags: '-e, --excel-output [file]',
    group: 'outputs',
    help: 'also write the Excel workbook (Summary, Raw data, Per turn); default file: report.xlsx in the output folder',
    schema: z.union([z.boolean(), text]),
    default: false,
  }),
  csv: option({
    flags: '--csv [file]',
    group: 'outputs',
    help: 'also write the per-request records as CSV; default file: requests.csv in the output folder',
    schema: z.union([z.boolean(), text]),
    default: false,
  }),
  warmupPercentages: option({
    flags: '--warmup-percentages <list>',
    group: 'outputs',
    help: 'a summary per value, each dropping that first share of requests by start time, e.g. 0%,50%',
    defaultText: '0%',
    read: readPercentList,
    schema: z.array(z.number().min(0, 'expected percentages in [0, 100)').max(99.999, 'expected percentages in [0, 100)')).min(1, 'expected at least one percentage'),
    default: [0],
  }),
  percentileMetrics: option({
    flags: '--percentile-metrics <list>',
    group: 'outputs',
    help: "vllm bench serve's: the metrics whose --metric-percentiles get flat keys p<N>_<metric>_ms in results.json (ttft, tpot, itl, e2el)",
    read: readWordList,
    schema: z.array(z.enum(['ttft', 'tpot', 'itl', 'e2el'], 'expected ttft, tpot, itl or e2el')).min(1, 'expected at least one metric'),
    default: ['ttft', 'tpot', 'itl'],
  }),
  metricPercentiles: option({
    flags: '--metric-percentiles <list>',
    group: 'outputs',
    help: "vllm bench serve's: the percentiles written as flat keys for --percentile-metrics, e.g. 90,99,99.5",
    read: readPercentList,
    schema: z.array(z.number().gt(0, 'expected percentiles in (0, 100]').max(100, 'expected percentiles in (0, 100]')).min(1, 'expected at least one percentile'),
    default: [99],
  }),
  goodput: option({
    flags: '--goodput <slo...>',
    group: 'outputs',
    help: 'SLOs for goodput, e.g. ttft:500 tpot:50 e2el:10000 (ms)',
    schema: parsedWith(z.array(z.string()), parseSlos),
  }),
};

/** Flags of the `run` and `sweep` commands that only change what the terminal shows: not run options. */
export const terminalOptions = {
  quiet: option({ flags: '-q, --quiet', group: 'outputs', help: 'no live progress and no status lines (errors and the reason for exit code 1 still print)', schema: z.boolean(), default: false }),
  progress: option({
    flags: '--progress <mode>',
    group: 'outputs',
    help: 'live progress on stderr: panel (redrawn ~4 times a second), plain (a line every 10 s, for logs), off; auto: panel on a terminal, else plain',
    schema: z.enum(['auto', 'panel', 'plain', 'off'], 'expected auto, panel, plain or off'),
    default: 'auto',
  }),
  json: option({ flags: '--json', group: 'outputs', help: 'print the summary as one JSON object on stdout (everything else goes to stderr)', schema: z.boolean(), default: false }),
  verbose: option({ flags: '-v, --verbose', group: 'outputs', help: 'print a line per request to stderr', schema: z.boolean(), default: false }),
  printContent: option({ flags: '--print-content', group: 'outputs', help: 'print each user message and answer to stderr', schema: z.boolean(), default: false }),
};

const REPEAT_EXPECTED = 'expected a whole number from 1 to 1000';

/** `run`'s and `sweep`'s repetitions: not a run option (the library runs once); the command runs the benchmark that many times. */
export const repeatOptions = {
  repeat: option({
    flags: '--repeat <n>',
    group: 'outputs',
    help: "run the benchmark n times, into --output-dir's repeat-1 … repeat-n (sweep: each point's folder's; not with --search), a line per run, then one table of each key metric's mean with its 95% confidence interval across them (repeats.json, repeats.html)",
    read: readInt,
    schema: z.number({ error: REPEAT_EXPECTED }).int(REPEAT_EXPECTED).min(1, REPEAT_EXPECTED).max(1000, REPEAT_EXPECTED),
    default: 1,
  }),
};
