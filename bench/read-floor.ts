// Benchmark: the CPU floor of one network read, so the client's per-event cost has a baseline from the platform
// itself. A server in a child process streams 200 SSE events per request, each in its own write 5 ms apart (so each
// arrives in its own read), over 300 concurrent connections; the client side reads them four ways and reports CPU µs
// per read (process-wide, this process only): a raw `net` socket with no HTTP parsing (the floor), node:http,
// undici's `dispatch` and `undici.request` (what ChatClient uses). Each way runs twice; the second run is warm.
// Usage: node --import tsx bench/read-floor.ts
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { createInterface } from 'node:readline';
import Table from 'cli-table3';
import { Agent, request } from 'undici';

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
};

const table = new Table({ head: ['client', 'reads', 'cold µs/read', 'warm µs/read', 'warm vs floor'], style: { head: [], border: [] } });
let floor = 0;
for (const [name, way] of Object.entries(ways)) {
  const perRead: number[] = [];
  let reads = 0;
  for (let round = 0; round < 2; round++) {
    const cpu = process.cpuUsage();
    reads = await way();
    const used = process.cpuUsage(cpu);
    perRead.push((used.user + used.system) / reads);
  }
  if (floor === 0) floor = perRead[1]!;
  table.push([name, reads, perRead[0]!.toFixed(2), perRead[1]!.toFixed(2), `${(perRead[1]! / floor).toFixed(2)}x`]);
}
child.stdin!.end();
console.log(`CPU per network read: ${STREAMS} connections x ${EVENTS} one-event reads, server in a child process`);
console.log(table.toString());
