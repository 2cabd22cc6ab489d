// How bench/startup.ts measures other processes: the CPU a live process has used so far (from /proc, to the
// nanosecond), and the wall and CPU time of a whole child process (rusage, as /usr/bin/time reports it).
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** CPU time used so far by the main thread of process `pid` alone (its task TID is the PID), ms. Linux only. */
export function mainThreadCpuMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

/**
 * CPU time used so far by every live thread of process `pid`, ms: the sum of the first field of
 * /proc/PID/task/TID/schedstat (ns on CPU, the scheduler's own accounting). Node's threads (main, V8 platform
 * workers, libuv pool) all live until exit, so at start-up nothing is lost to exited threads. Linux only.
 */
export function liveCpuMs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread exited between the listing and the read
    }
  }
  return ns / 1e6;
}

/** What a child process cost: wall ms from spawn to exit, CPU ms of all its threads (user + system), and its output. */
export interface ChildCost {
  wallMs: number;
  cpuMs: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

let seq = 0;

/**
 * Runs `node ARGS` to its end under /usr/bin/time, which reports the child's rusage from wait4(2): user and system
 * CPU of every thread, counted by the kernel (printed to 10 ms). Killed after `timeoutMs`.
 */
export function nodeCost(args: readonly string[], options: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<ChildCost> {
  const timeFile = join(tmpdir(), `chatload-bench-time-${process.pid}-${seq++}`);
  const startMs = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', timeFile, process.execPath, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      const wallMs = performance.now() - startMs;
      clearTimeout(timer);
      try {
        const [user, system] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
        resolve({ wallMs, cpuMs: (user! + system!) * 1000, code, stdout, stderr });
      } catch (error) {
        reject(new Error(`/usr/bin/time gave no figures (is it installed?): ${stderr.slice(-500)}`, { cause: error }));
      } finally {
        rmSync(timeFile, { force: true });
      }
    });
  });
}

/** Wall ms from spawning `node ARGS` to its exit (output discarded). */
export function nodeWallMs(args: readonly string[]): Promise<number> {
  const startMs = performance.now();
  const child = spawn(process.execPath, args, { stdio: 'ignore', env: { ...process.env, NO_COLOR: '1' } });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(performance.now() - startMs);
    });
  });
}

/** The median of `values` (mean of the middle two when even). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
