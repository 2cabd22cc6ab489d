// Runs many `chatload` command lines in ONE child process, to keep bad-input tests fast: each argv goes through the
// compiled CLI's own `main()` (the same function dist/cli/entry.js calls) with stdout and stderr captured
// separately, in cli-batch-child.mjs. A process costs ~0.4 s of CPU to start; a batch of 30 bad inputs costs one.
import { spawn } from 'node:child_process';
import type { CliResult } from './cli.js';
import { ensureDist } from './dist.js';
import { repoPath } from './repo.js';

ensureDist();

/** One command line's outcome: the code main() returned, and what it wrote. */
export type BatchResult = Omit<CliResult, 'signal'>;

/** In the repository (tests compiled into dist-test/ have no copy of it: it imports ../../dist/ from test/helpers/). */
const childScript = repoPath('test', 'helpers', 'cli-batch-child.mjs');

/** Runs every argv list through main() in one child process (killed after `timeoutMs`), in order. */
export function runCliBatch(argvs: readonly (readonly string[])[], options: { timeoutMs?: number; cwd?: string } = {}): Promise<BatchResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript], {
      env: { ...process.env, NO_COLOR: '1', OPENAI_API_KEY: '' },
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(line) as BatchResult[]);
      } catch {
        reject(new Error(`the batch process failed (${code ?? signal}): stdout ${stdout.slice(-2000)} stderr ${stderr.slice(-2000)}`));
      }
    });
    child.stdin.end(JSON.stringify(argvs));
  });
}
