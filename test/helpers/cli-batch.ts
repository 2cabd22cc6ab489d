// Runs many `chatload` command lines in ONE child process, to keep bad-input tests fast: each argv goes through the
// CLI's own `main()` (the same function src/cli/entry.ts calls) with stdout and stderr captured separately. A
// process costs ~2.5 s of tsx start-up here; a batch of 30 bad inputs costs one start-up.
//
// As a script: `node --import tsx test/helpers/cli-batch.ts` reads a JSON list of argv lists on stdin and prints one
// JSON line of results on the real stdout. As a module: runCliBatch() spawns it and returns the results.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CliResult } from './cli.js';

/** One command line's outcome: the code main() returned, and what it wrote. */
export type BatchResult = Omit<CliResult, 'signal'>;

const self = fileURLToPath(import.meta.url);

/** Runs every argv list through main() in one child process (killed after `timeoutMs`), in order. */
export function runCliBatch(argvs: readonly (readonly string[])[], options: { timeoutMs?: number; cwd?: string } = {}): Promise<BatchResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', self], {
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

async function runAsScript(): Promise<void> {
  const { main } = await import('../../src/cli/main.js');
  let input = '';
  for await (const chunk of process.stdin) input += (chunk as Buffer).toString();
  const argvs = JSON.parse(input) as string[][];
  const realStdout = process.stdout.write.bind(process.stdout);
  const realStderr = process.stderr.write.bind(process.stderr);
  const results: BatchResult[] = [];
  for (const argv of argvs) {
    let out = '';
    let err = '';
    process.stdout.write = ((chunk: string | Uint8Array) => ((out += chunk.toString()), true)) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string | Uint8Array) => ((err += chunk.toString()), true)) as typeof process.stderr.write;
    let code: number | null;
    try {
      code = await main(argv);
    } catch (error) {
      // main() must never throw; record it so the test fails on it with the stack.
      err += `main() threw: ${(error as Error).stack ?? String(error)}`;
      code = null;
    } finally {
      process.stdout.write = realStdout;
      process.stderr.write = realStderr;
    }
    results.push({ code, stdout: out, stderr: err });
  }
  realStdout(`${JSON.stringify(results)}\n`);
  process.exit(0);
}

if (process.argv[1] === self) await runAsScript();
