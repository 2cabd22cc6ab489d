// bench-only: bench/fixed-timing.ts measures the client against a server whose timers no client shares.
// A fixed-timing server in its own process, so its timers never wait on the client's event loop: timing tests then
// measure the client, not the two sharing one thread. Run as a script, it starts the server and prints its URL.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startFixedTimingServer, type FixedTimingOptions } from '../test/helpers/scripted-server.js';

const self = fileURLToPath(import.meta.url);

/** A fixed-timing server in a child process: its URL and how to stop it. */
export interface FixedTimingProcess {
  url: string;
  close(): Promise<void>;
}

/** Starts the server of startFixedTimingServer(options) in a child process (killed by close(), or when this process exits). */
export async function startFixedTimingProcess(options: FixedTimingOptions): Promise<FixedTimingProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', self, JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the fixed-timing server did not start within 20 s')), 20_000);
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`the fixed-timing server exited with ${code}`)));
  });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin!.end(); // the child exits when its stdin closes
      }),
  };
}

if (process.argv[1] === self) {
  const server = await startFixedTimingServer(JSON.parse(process.argv[2]!) as FixedTimingOptions);
  process.stdout.write(`${server.url}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
}
