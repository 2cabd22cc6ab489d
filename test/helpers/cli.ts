import { spawn } from 'node:child_process';
import { DIST_CLI, ensureDist } from './dist.js';

ensureDist();

/** What a chatload CLI process printed and how it exited. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `chatload ARGS` (the compiled CLI, rebuilt first if any source is newer: see dist.ts) with no TTY, bounded by
 * `timeoutMs` (then killed). `onStdout` gets the child too, e.g. to send it a signal.
 */
export function runCli(
  args: readonly string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string; onStdout?: (text: string, child: ReturnType<typeof spawn>) => void } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [DIST_CLI, ...args], {
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      options.onStdout?.(stdout, child);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      options.onStdout?.(stderr, child);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
