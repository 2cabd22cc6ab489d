// Benchmark: the CPU floor of one network read, so the client's per-event cost has a baseline from the platform
// itself. A server in a child process streams 200 SSE events per request, each in its own write 5 ms apart (so each
// arrives in its own read), over 300 concurrent connections; the client side reads them six ways and reports CPU µs
// per read (process-wide, this process only): a raw `net` socket with no HTTP parsing (the floor), the same with a
// reused `onread` buffer, node:http, undici's `dispatch`, `undici.request`, and ChatClient itself (undici.request plus
// the SSE reader, the response collector and the request timer: the rows' difference is chatload's own hot path).
// Each way runs twice; the second run is warm. READ_FLOOR_ONLY=<row name prefix> runs one row.
// Usage: node --import tsx bench/read-floor.ts
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { createInterface } from 'node:readline';
import Table from 'cli-table3';
import { Agent, request } from 'undici';
import { ChatClient } from '../src/client/chat-client.js';

const STREAMS = 300;
const EVENTS = 200;
const SERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const tick = () => {
      if (i++ >= ${EVENTS}) return res.end('data: [DONE]\\n\\n');
      res.write('data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" tok' + i + '"},"finish_reason":null}]}\\n\\n');
      setTimeout(tick, 5);
    };
    tick();
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`;

const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['pipe', 'pipe', 'inherit'] });
const port = await new Promise<number>((resolve) => createInterface({ input: child.stdout! }).once('line', (line) => resolve(Number(line))));
const url = `http://127.0.0.1:${port}/`;

function all(run: (done: () => void) => void): Promise<void> {
  return Promise.all(Array.from({ length: STREAMS }, () => new Promise<void>((resolve) => run(resolve)))).then(() => undefined);
}

const ways: Record<string, () => Promise<number>> = {
  'raw net socket (floor)': async () => {
    let reads = 0;
    await all((done) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}'));
      socket.on('data', (chunk: Buffer) => {
        performance.now();
        reads++;
        if (chunk.includes('[DONE]')) {
          socket.destroy();
          done();
        }
      });
    });
    return reads;
  },
  'net socket, onread buffer': async () => {
    let reads = 0;
    const done = '[DONE]';
    await all((finish) => {
      const socket = net.connect({
        port,
        host: '127.0.0.1',
        onread: {
          buffer: Buffer.allocUnsafe(64 * 1024),
          callback: (n: number, buf: Uint8Array) => {
            performance.now();
            reads++;
            if (Buffer.from(buf.buffer, buf.byteOffset, n).includes(done)) {
              socket.destroy();
              finish();
            }
            return true;
          },
        },
      });
      socket.on('connect', () => socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}'));
    });
    return reads;
  },
  'node:http': async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: STREAMS });
    let reads = 0;
    await all((done) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', agent }, (res) => {
        res.on('data', () => {
          performance.now();
          reads++;
        });
        res.on('end', done);
      });
      req.end('{}');
    });
    agent.destroy();
    return reads;
  },
  'undici dispatch': async () => {
    const agent = new Agent({ connections: STREAMS, pipelining: 1 });
    let reads = 0;
    const origin = new URL(url).origin;
    await all((done) => {
      agent.dispatch(
        { origin, path: '/', method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } },
        {
          onConnect: () => {},
          onHeaders: () => true,
          onData: () => {
            performance.now();
            reads++;
            return true;
          },
          onComplete: () => done(),
          onError: () => done(),
        },
      );
    });
    await agent.close();
    return reads;
  },
  'undici.request (ChatClient)': async () => {
    const agent = new Agent({ connections: STREAMS, pipelining: 1 });
    let reads = 0;
    await all((done) => {
      void request(url, { method: 'POST', body: '{}', dispatcher: agent }).then((res) => {
        res.body.on('data', () => {
          performance.now();
          reads++;
        });
        res.body.on('end', done);
      });
    });
    await agent.close();
    return reads;
  },
  'ChatClient (undici.request + SSE reader + collector)': async () => {
    const client = new ChatClient({ baseUrl: url, connections: STREAMS, requestTimeoutMs: 60_000 });
    let reads = 0;
    await Promise.all(
      Array.from({ length: STREAMS }, async () => {
        const result = await client.send({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
        reads += result.numTokenChunks; // one event per read here: the server writes each 5 ms apart
      }),
    );
    await client.close();
    return reads;
  },
};

/** CPU µs (user + system, this process) per read of one run of `way`. */
async function cpuPerRead(way: () => Promise<number>): Promise<{ reads: number; us: number }> {
  const cpu = process.cpuUsage();
  const reads = await way();
  const used = process.cpuUsage(cpu);
  return { reads, us: (used.user + used.system) / reads };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

const table = new Table({ head: ['client', 'reads', 'cold µs/read', 'warm µs/read (median of 3)', 'warm vs floor'], style: { head: [], border: [] } });
let floor = 0;
const only = process.env.READ_FLOOR_ONLY;
for (const [name, way] of Object.entries(ways)) {
  if (only !== undefined && !name.startsWith(only)) continue;
  const cold = await cpuPerRead(way);
  const warm: number[] = [];
  for (let round = 0; round < 3; round++) warm.push((await cpuPerRead(way)).us);
  const us = median(warm);
  if (floor === 0) floor = us;
  table.push([name, cold.reads, cold.us.toFixed(2), us.toFixed(2), `${(us / floor).toFixed(2)}x`]);
}
console.log(`CPU per network read: ${STREAMS} connections x ${EVENTS} one-event reads, server in a child process`);
console.log(table.toString());

// chatload's own hot path: ChatClient minus the undici.request it is built on, in alternating pairs so that the
// machine's drift between runs (often 20-50% on this shared host) falls on both sides of each difference.
if (only === undefined) {
  const differences: number[] = [];
  for (let pair = 0; pair < 5; pair++) {
    const base = await cpuPerRead(ways['undici.request (ChatClient)']!);
    const full = await cpuPerRead(ways['ChatClient (undici.request + SSE reader + collector)']!);
    differences.push(full.us - base.us);
  }
  const sorted = [...differences].sort((a, b) => a - b);
  console.log(`chatload's hot path (SSE reader + collector + timer) per event: ${median(differences).toFixed(2)} µs (median of 5 alternating pairs; range ${sorted[0]!.toFixed(2)} to ${sorted.at(-1)!.toFixed(2)})`);
}
child.stdin!.end();
