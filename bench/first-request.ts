// Start-up up to the first request, for bench/startup.ts: a stub OpenAI-compatible server that notes, when the first
// chat request of a client process arrives, how much CPU that process has used (liveCpuMs) and how long since it was
// spawned. Every chat request gets a tiny streamed answer, so a client that is let go finishes at once.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { liveCpuMs, mainThreadCpuMs } from './child-cpu.js';

/**
 * A client process at its first chat request: CPU ms used so far (every thread, and the main thread alone; the rest
 * is V8's background compilers and GC and libuv's pool), ms since spawn, CLOCK_MONOTONIC µs, the body.
 */
export interface FirstRequest {
  cpuMs: number;
  mainThreadCpuMs: number;
  wallMs: number;
  atMonotonicUs: number;
  body: Record<string, unknown>;
}

const ANSWER = [
  'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}\n\n',
  'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}\n\n',
  'data: [DONE]\n\n',
].join('');

/** The stub server: its URL, and `probe` which runs one client to its first chat request. */
export interface FirstRequestServer {
  url: string;
  /**
   * Spawns `node ARGS`, resolves at its first chat request, then stops it with `stopSignal` (SIGKILL by default; a
   * SIGINT lets chatload end its run and write a --cpu-prof profile) and waits for its exit. Rejects after 60 s.
   */
  probe(args: readonly string[], stopSignal?: NodeJS.Signals, env?: NodeJS.ProcessEnv): Promise<FirstRequest>;
  close(): Promise<void>;
}

export async function startFirstRequestServer(): Promise<FirstRequestServer> {
  let waiting: { child: ChildProcess; spawnedAtMs: number; resolve: (r: FirstRequest) => void } | undefined;
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      if (req.method === 'GET' && req.url?.startsWith('/v1/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'bench-model', object: 'model', owned_by: 'bench', max_model_len: 32768 }] }));
        return;
      }
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"not found"}}');
        return;
      }
      const first = waiting;
      if (first?.child.pid !== undefined) {
        // Read before anything else: the client is now waiting for this answer, so its CPU stands still.
        const cpuMs = liveCpuMs(first.child.pid);
        const mainMs = mainThreadCpuMs(first.child.pid);
        const atMonotonicUs = Number(process.hrtime.bigint() / 1000n);
        waiting = undefined;
        first.resolve({ cpuMs, mainThreadCpuMs: mainMs, wallMs: performance.now() - first.spawnedAtMs, atMonotonicUs, body: JSON.parse(text) as Record<string, unknown> });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(ANSWER);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const probe = (args: readonly string[], stopSignal: NodeJS.Signals = 'SIGKILL', env: NodeJS.ProcessEnv = {}): Promise<FirstRequest> => {
    const spawnedAtMs = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1', ...env } });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const first = new Promise<FirstRequest>((resolve, reject) => {
      waiting = { child, spawnedAtMs, resolve };
      const timer = setTimeout(() => reject(new Error(`no chat request within 60 s: ${stderr.slice(-500)}`)), 60_000);
      child.once('exit', (code) => reject(new Error(`the client exited (${code}) before its first chat request: ${stderr.slice(-500)}`)));
      void exited.then(() => clearTimeout(timer));
    });
    return first.then(
      async (result) => {
        child.kill(stopSignal);
        const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(killer);
        return result;
      },
      async (error: unknown) => {
        waiting = undefined;
        child.kill('SIGKILL');
        await exited;
        throw error;
      },
    );
  };
  return { url, probe, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
