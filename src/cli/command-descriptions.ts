/**
 * What each `chatload` command does, in --help order: written once, read by the command's module and by the lazy
 * command table (commands.ts), which must not import the modules themselves up front.
 */
export const COMMAND_DESCRIPTIONS = {
  run:
    'Replay multi-turn conversations against an OpenAI-compatible server and measure it. Without --url, runs the built-in simulator.',
  serve:
    'Run the built-in simulated OpenAI-compatible LLM server (continuous batching, prefix cache, faults). See docs/SIMULATOR.md.',
  generate:
    'Generate conversations from a generate_conversations config (the reference format) and write them. See docs/DATASETS.md.',
  convert:
    'Convert other dataset formats to chatload conversations. See docs/DATASETS.md.',
  sweep:
    'Run a series of load points (clients or session rates), the idle gaps between turns (--think-time LIST with --session-rate: the prefix cache\'s retention), or search for the highest session rate that meets the --goodput SLOs; writes each run, sweep.json and sweep.html.',
  report:
    'Render report.html (and optionally Excel and CSV) from a results directory; works for unfinished runs too.',
  compare:
    'Compare the key metrics of two or more runs side by side (the first is the baseline), with deltas; with --fail-on, a CI gate that exits 1 when a metric got worse beyond its limit and its noise band.',
  merge:
    "Combine the results folders of shards (--shard I/N) into one results folder: every record on one clock, exact percentiles, summed conversation counts, and the report. Past --max-records records, the merge streams the records and takes every statistic's percentiles from histograms (within 0.1%). With --expect N --wait D, it first waits for N complete shard folders.",
  schema:
    'Print the JSON Schema of results.json (`schema results`) or of one requests.jsonl record (`schema record`), for the results\' schema_version. See docs/REPORTS.md.',
  trace:
    'Production traces (Mooncake, Bailian, Azure, BurstGPT): `trace stats FILE` prints ISL/OSL distributions, the request rate over time and the theoretical prefix-cache hit ratio; `trace synthesize FILE -o OUT` writes a new trace scaled in rate and lengths, its prefix sharing kept or set. See docs/DATASETS.md.',
  completion:
    'Print a shell completion script: eval "$(chatload completion bash)" in ~/.bashrc, zsh in ~/.zshrc; fish: save it in ~/.config/fish/completions/chatload.fish.',
} as const;

/** A command's name. */
export type CommandName = keyof typeof COMMAND_DESCRIPTIONS;
