// A `chatload serve` child process for benchmarks: the simulator's CPU is then not the client's, and its event loop
// never shares a thread with the client being measured.
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DIST_CLI, ensureDist } from '../test/helpers/dist.js';

/** A running simulator process: its URL and how to stop it (SIGTERM, which flushes its trace). */
export interface SimProcess {
  url: string;
  /** The simulator's process id (to read its CPU time from /proc). */
  pid: number;
  close(): Promise<void>;
}

/** Starts `chatload serve` on 127.0.0.1 at a free port with the given profile, engine overrides and options. */
export async function startSimProcess(options: { profile?: string; config?: Record<string, unknown>; trace?: string; seed?: number } = {}): Promise<SimProcess> {
  // The compiled CLI: through tsx the simulator would take ~1 s of CPU more to start (issue 17).
  ensureDist();
  const args = [DIST_CLI, 'serve', '--port', '0', '--profile', options.profile ?? 'cpu-tiny', '--seed', String(options.seed ?? 0)];
  // The overrides' file, removed once the simulator has stopped.
  let configFile: string | undefined;
  if (options.config) {
    configFile = join(tmpdir(), `chatload-bench-sim-${process.pid}-${Date.now()}.json`);
    writeFileSync(configFile, JSON.stringify(options.config));
    args.push('--config', configFile);
  }
  if (options.trace) args.push('--trace', options.trace);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the simulator did not start within 30 s')), 30_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`the simulator exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid!,
    close: () =>
      new Promise<void>((resolve) => {
        const done = (): void => {
          if (configFile !== undefined) rmSync(configFile, { force: true });
          resolve();
        };
        if (child.exitCode !== null) return done();
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(kill);
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}
