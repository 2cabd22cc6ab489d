import type { Command } from 'commander';
import { COMMAND_DESCRIPTIONS, type CommandName } from './command-descriptions.js';

/** Registers a command on the program; `setExitCode` receives a run's exit code (commands that need it). */
export type RegisterCommand = (program: Command, setExitCode: (code: number) => void) => void;

/**
 * How to load each command's module, by name. Why lazily: loading every command's module (the engine, undici, zod,
 * the report renderers) cost `chatload --version` ~0.5 s (issue 17); main() loads only the command it runs, and
 * `--help` and `--version` load none.
 */
export const COMMAND_LOADERS: Readonly<Record<CommandName, () => Promise<RegisterCommand>>> = {
  run: async () => (await import('./run.js')).registerRunCommand,
  serve: async () => (await import('./serve.js')).registerServeCommand,
  generate: async () => (await import('./generate.js')).registerGenerateCommand,
  convert: async () => (await import('./convert.js')).registerConvertCommand,
  sweep: async () => (await import('./sweep.js')).registerSweepCommand,
  report: async () => (await import('./report.js')).registerReportCommand,
  compare: async () => (await import('./compare.js')).registerCompareCommand,
  merge: async () => (await import('./merge.js')).registerMergeCommand,
  trace: async () => (await import('./trace.js')).registerTraceCommand,
  schema: async () => (await import('./schema.js')).registerSchemaCommand,
  // It lists every command's flags, so it is handed this table (it cannot import this module back: no cycles).
  completion: async () => {
    const { registerCompletionCommand } = await import('./completion.js');
    return (program) => registerCompletionCommand(program, COMMAND_LOADERS);
  },
};

/** Every command, in --help order, with its description. */
export const COMMAND_NAMES = Object.keys(COMMAND_DESCRIPTIONS) as CommandName[];
export { COMMAND_DESCRIPTIONS };
