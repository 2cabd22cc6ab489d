// `chatload serve` as a child process, for tests and benches that must kill the server (SIGKILL) or keep its
// memory apart from the client's.
import { spawn, type ChildProcess } from 'node:child_process';
import { DIST_CLI, ensureDist } from './dist.js';

ensureDist();

/** A running `chatload serve` child: its URL, the process, and a kill that waits for the exit. */
export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** Sends `signal` (default SIGKILL) and resolves when the process has exited. Safe to call twice. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Spawns `chatload serve --port 0 ARGS` (the compiled CLI: see dist.ts) and resolves once it printed its URL. Rejects
 * (and kills the child) when it exits first or does not listen within `timeoutMs`.
 */
export function startServeProcess(args: readonly string[], timeoutMs = 20_000): Promise<ServeProcess> {
  const child = spawn(process.execPath, [DIST_CLI, 'serve', '--port', '0', ...args], {
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      void kill();
      reject(new Error(`chatload serve did not listen within ${timeoutMs} ms: ${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        // Keep draining so a full pipe never blocks the server.
        child.stdout?.resume();
        child.stderr?.resume();
        resolve({ url: match[1]!, child, kill });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`chatload serve exited (${code ?? signal}) before listening: ${output}`));
    });
  });
}
