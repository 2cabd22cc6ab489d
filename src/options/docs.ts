import { describeDefault, HELP_GROUPS, type HelpGroup, type OptionSpec, type OptionTable } from './define.js';
import { RUN_OPTIONS } from './run-options.js';
import { generateOptions } from './table/generate.js';
import { repeatOptions, terminalOptions } from './table/outputs.js';
import { sweepOptions } from './table/sweep.js';

/*
 * docs/OPTIONS.md, made from the option tables: `npm run docs:options` writes it, and a test fails when the committed
 * file differs from what the tables say.
 */

/** Escapes a table cell: pipes, and the angle brackets of placeholders (<n>), which markdown would take for HTML. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A boolean's default in words, demo default included. */
function booleanDefault(spec: OptionSpec): string {
  const word = (on: unknown): string => (on === true ? 'on' : 'off');
  const demo = spec.demoDefault === undefined ? '' : `; ${word(spec.demoDefault.value)} for the built-in demo`;
  return `${word(spec.default)}${demo}`;
}

/** One option's row: flags, library key, default, what it does (and its environment variable). */
function row(key: string, spec: OptionSpec, table: OptionTable, library: boolean): string {
  const flags = [spec.flags, ...(spec.negation ? [spec.negation.flags] : [])].map((f) => `\`${f}\``).join('<br>');
  const isBoolean = typeof spec.default === 'boolean';
  const fallback = spec.required === true ? 'required' : '';
  const described = isBoolean ? booleanDefault(spec) : (describeDefault(spec, table) ?? fallback);
  let help = spec.negation ? `${spec.help}; \`${spec.negation.flags}\`: ${spec.negation.help}` : spec.help;
  if (spec.env !== undefined) help += ` (environment: \`${spec.env}\`)`;
  const cells = [flags, ...(library ? [`\`${key}\``] : []), cell(described), cell(help)];
  return `| ${cells.join(' | ')} |`;
}

/** Some options of a table as one markdown table. */
function rows(entries: ReadonlyArray<[string, OptionSpec]>, table: OptionTable, library: boolean): string[] {
  return [
    library ? '| flag | library key | default | what it does |' : '| flag | default | what it does |',
    library ? '| --- | --- | --- | --- |' : '| --- | --- | --- |',
    ...entries.map(([key, spec]) => row(key, spec, table, library)),
    '',
  ];
}

/** A command's options as markdown tables, one per help group, in the groups' order. */
function tables(table: OptionTable, library: boolean): string {
  const out: string[] = [];
  for (const group of Object.keys(HELP_GROUPS) as HelpGroup[]) {
    const entries = Object.entries(table).filter(([, spec]) => spec.group === group);
    if (entries.length > 0) out.push(`### ${HELP_GROUPS[group]}`, '', ...rows(entries, table, library));
  }
  return out.join('\n');
}

/** The whole of docs/OPTIONS.md. */
export function renderOptionsDoc(): string {
  return `<!-- Generated from src/options/table/*.ts by \`npm run docs:options\`: edit the tables, not this file. -->
# Options

Every option of \`chatload run\` is declared once, in \`src/options/table/\` (one file per group below): its flags,
default, help and validation. \`--help\`, this page, the CLI's checks and the library's \`runBenchmark(options)\`
all come from there, so they agree. The library takes the same options under the keys shown (\`numClients\` for
\`-p\`), with the same defaults and the same errors.

- Flag names are the reference tool's (\`benchmark_serving_multi_turn.py\`): \`-i -u -m -p -k -n\` and the rest work
  unchanged.
- **The built-in demo** (no \`--url\` and no \`-i\`: \`npm start\`) has its own defaults where the table says so:
  16 clients over 32 active conversations, drained to the end (\`--no-early-stop\`), so it finishes in about half a
  minute. Any value you give wins.
- Every problem with the options is reported at once, in one line, each naming its flag (and the environment
  variable when one set it); the exit code is 2:
  \`chatload: invalid options: --num-clients: expected a positive integer; --ramp-up: expected linear:START:END:SECONDS, e.g. linear:1:20:60\`
- \`results.json\` records the options under their library keys, as given and with their defaults (secrets redacted).

## chatload run

${tables(RUN_OPTIONS, true)}
### Terminal output

Flags of \`run\` and \`sweep\` that change only what the terminal shows (not run options: the library has none of them).

${rows(Object.entries(terminalOptions), terminalOptions, false).join('\n')}
### Repeated runs

\`run\`, and \`sweep\` (each load point; not with \`--search\`): the same benchmark several times, and the confidence
interval of each key metric across them.

${rows(Object.entries(repeatOptions), repeatOptions, false).join('\n')}
## chatload sweep

\`chatload sweep\` takes every \`run\` option above, plus exactly one of \`--concurrency\`, \`--session-rates\` or
\`--search\` (see [LOAD-MODELS.md](LOAD-MODELS.md#sweeps)).

${tables(sweepOptions, false)}
## chatload generate

The reference's \`--generate-only\`: it shares \`--seed\`, \`--tokenizer\`, \`--trust-remote-code\` and \`-m\` with
\`run\` (see [DATASETS.md](DATASETS.md)).

${tables(generateOptions, false)}
## Other commands

\`serve\`, \`convert\`, \`report\`, \`compare\` and \`merge\` document their options with \`--help\`, and in
[SIMULATOR.md](SIMULATOR.md), [DATASETS.md](DATASETS.md), [REPORTS.md](REPORTS.md) and [SCALING.md](SCALING.md).
`;
}

/**
 * The doc comment of a run option in src/options/run-options-input.ts (written by tools/options-types.ts, which adds
 * each property's type from the schema): its help, flags and default.
 */
export function inputDocComment(key: keyof typeof RUN_OPTIONS): string {
  const spec: OptionSpec = RUN_OPTIONS[key];
  const described = describeDefault(spec, RUN_OPTIONS);
  const text = `${spec.help} (\`${spec.flags}\`${described === undefined ? '' : `; default: ${described}`})`.replace(/\*\//g, '*\\/');
  return `  /** ${text} */`;
}
