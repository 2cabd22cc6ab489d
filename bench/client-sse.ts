// Client CPU per SSE event: ChatClient (undici's dispatch() + the hand-written SseReader) against baselines measured in
// the same run: fetch + eventsource-parser@3, and the client floor, node:http with its own split on blank lines (what
// bench/client-floor.mjs does), each doing the same per-event work (a timestamp per read, one JSON.parse per event, text
// accumulation). The server runs in a child process so its CPU is not counted: process.cpuUsage() covers every
// thread of this process. The clients take turns within each round (the machine is shared); the best round of each
// is shown. `--before DIR` adds the ChatClient of another checkout (DIR/src/client/chat-client.ts, e.g. main's).
// Run: node --import tsx bench/client-sse.ts [--events 200000] [--streams 200] [--batches 1] [--rounds 2] [--before DIR]
// (the per-request figure of docs/PERFORMANCE.md: --streams 50 --events 6400 --batches 10 --rounds 9: 128 events a request)
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent as HttpAgent, createServer, request as httpRequest, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import Table from 'cli-table3';
import { createParser } from 'eventsource-parser';
import { ChatClient } from '../src/client/chat-client.js';


function argNumber(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index === -1 ? Number.NaN : Number(process.argv[index + 1]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

// ---- server (child process) ----

/**
 * Streams `max_tokens` events per request, round-robin over the open streams like a batched engine: each turn writes
 * `burst` events (1 = one write per token, as servers do; more = several events per network read, which isolates the
 * parsing cost from the per-read I/O cost).
 */
function runServer(): void {
  const active = new Set<{ res: ServerResponse; left: number; sent: number; burst: number }>();
  let pumping = false;
  const chunk = (i: number): string =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model: 'bench-model',
      choices: [{ index: 0, delta: { content: ` tok${i}` }, logprobs: null, finish_reason: null }],
    })}\n\n`;
  const pump = (): void => {
    for (const stream of active) {
      if (stream.res.destroyed) {
        active.delete(stream);
        continue;
      }
      let text = '';
      for (let i = 0; i < stream.burst && stream.left > 0; i++, stream.left--) text += chunk(stream.sent++);
      stream.res.write(text);
      if (stream.left === 0) {
        active.delete(stream);
        const usage = { prompt_tokens: 10, completion_tokens: stream.sent, total_tokens: 10 + stream.sent };
        stream.res.end(`data: ${JSON.stringify({ choices: [], usage })}\n\ndata: [DONE]\n\n`);
      }
    }
    if (active.size > 0) setImmediate(pump);
    else pumping = false;
  };
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { max_tokens?: number; burst?: number };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      active.add({ res, left: Math.max(1, body.max_tokens ?? 100), sent: 0, burst: Math.max(1, body.burst ?? 1) });
      if (!pumping) {
        pumping = true;
        setImmediate(pump);
      }
    });
  });
  server.listen({ port: 0, host: '127.0.0.1', backlog: 8192 }, () => {
    process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
  });
  // Ends with the parent: the parent closes our stdin when it is done (or dies).
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

// ---- clients ----

type Runner = (url: string, streams: number, eventsPerStream: number, burst: number) => Promise<number>;

const requestBody = (events: number, burst: number): Record<string, unknown> => ({
  model: 'bench-model', messages: [{ role: 'user', content: 'go' }], stream: true, max_tokens: events,
  stream_options: { include_usage: true }, burst,
});

/** (a) ChatClient (this checkout's, or another's): returns the number of token events received. */
const chatClientRunner = (Client: typeof ChatClient): Runner => async (url, streams, eventsPerStream, burst) => {
  const client = new Client({ baseUrl: url, connections: streams, requestTimeoutMs: 60_000 });
  try {
    const results = await Promise.all(
      Array.from({ length: streams }, () =>
        client.send({
          model: 'bench-model', messages: [{ role: 'user', content: 'go' }], stream: true, maxTokens: eventsPerStream, extraBody: { burst },
        }),
      ),
    );
    let events = 0;
    for (const result of results) {
      if (result.error) throw new Error(`ChatClient: ${result.error.kind}: ${result.error.message}`);
      events += result.numTokenChunks;
    }
    return events;
  } finally {
    await client.close();
  }
};

/** (b) fetch + eventsource-parser, doing what ChatClient does per read and per event. */
const runFetch: Runner = async (url, streams, eventsPerStream, burst) => {
  const one = async (): Promise<number> => {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(requestBody(eventsPerStream, burst)),
    });
    if (!response.body) throw new Error('fetch: no body');
    const times: number[] = [];
    let content = '';
    let chunks = 0;
    let atMs = 0;
    let done = false;
    const parser = createParser({
      onEvent(event) {
        if (event.data === '[DONE]') {
          done = true;
          return;
        }
        const json = JSON.parse(event.data) as { choices?: Array<{ delta?: { content?: string } }> };
        const text = json.choices?.[0]?.delta?.content;
        if (text) {
          content += text;
          times.push(atMs);
          chunks++;
        }
      },
    });
    const decoder = new TextDecoder();
    for await (const part of response.body) {
      atMs = performance.now();
      parser.feed(decoder.decode(part, { stream: true }));
    }
    if (!done || content.length === 0) throw new Error('fetch: stream ended without [DONE]');
    return chunks;
  };
  const counts = await Promise.all(Array.from({ length: streams }, one));
  return counts.reduce((sum, count) => sum + count, 0);
};

/** (c) the client floor: node:http, splitting the body on blank lines as bench/client-floor.mjs does. */
const runFloor: Runner = async (url, streams, eventsPerStream, burst) => {
  const agent = new HttpAgent({ keepAlive: true, maxSockets: streams });
  const target = new URL(`${url}/v1/chat/completions`);
  const one = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(requestBody(eventsPerStream, burst));
      const req = httpRequest(target, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
        res.setEncoding('utf8');
        const times: number[] = [];
        let text = '';
        let content = '';
        let chunks = 0;
        let done = false;
        res.on('data', (part: string) => {
          const atMs = performance.now();
          text += part;
          let end: number;
          while ((end = text.indexOf('\n\n')) >= 0) {
            const line = text.slice(0, end);
            text = text.slice(end + 2);
            if (line === 'data: [DONE]') done = true;
            if (!line.startsWith('data: ') || done) continue;
            const delta = (JSON.parse(line.slice(6)) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content;
            if (delta) {
              content += delta;
              times.push(atMs);
              chunks++;
            }
          }
        });
        res.on('end', () => (done && content.length > 0 ? resolve(chunks) : reject(new Error('floor: stream ended without [DONE]'))));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  try {
    const counts = await Promise.all(Array.from({ length: streams }, one));
    return counts.reduce((sum, count) => sum + count, 0);
  } finally {
    agent.destroy();
  }
};

interface Measured {
  usPerEvent: number;
  userUsPerEvent: number;
  wallMs: number;
}

/** `--batches N`: each measurement runs N batches of `streams` concurrent requests one after another (more CPU per figure, less noise). */
const BATCHES = argNumber('batches', 1);

async function measure(runner: Runner, url: string, streams: number, eventsPerStream: number, burst: number, batches = BATCHES): Promise<Measured> {
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  let events = 0;
  for (let batch = 0; batch < batches; batch++) events += await runner(url, streams, eventsPerStream, burst);
  const wallMs = performance.now() - wallBefore;
  const cpu = process.cpuUsage(cpuBefore);
  if (events !== batches * streams * eventsPerStream) throw new Error(`expected ${batches * streams * eventsPerStream} events, got ${events}`);
  return { usPerEvent: (cpu.user + cpu.system) / events, userUsPerEvent: cpu.user / events, wallMs };
}

async function startServerProcess(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--server'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [line] = (await Promise.race([
    once(child.stdout!, 'data'),
    new Promise((_, reject) => setTimeout(() => reject(new Error('server did not start within 20 s')), 20_000).unref()),
  ])) as [Buffer];
  const { port } = JSON.parse(line.toString('utf8').split('\n')[0]!) as { port: number };
  return { child, url: `http://127.0.0.1:${port}` };
}

async function main(): Promise<void> {
  const totalEvents = argNumber('events', 200_000);
  const streams = argNumber('streams', 200);
  const rounds = argNumber('rounds', 2);
  const eventsPerStream = Math.max(1, Math.round(totalEvents / streams));
  // 120 s for the default run (four clients); longer ones (more rounds or batches) get time in proportion.
  const timeLimitMs = Math.max(120_000, rounds * BATCHES * 8_000);
  const limit = setTimeout(() => {
    console.error(`bench exceeded ${timeLimitMs / 1000} s; stopping`);
    process.exit(1);
  }, timeLimitMs);
  limit.unref();
  const beforeIndex = process.argv.indexOf('--before');
  const beforeDir = beforeIndex === -1 ? undefined : process.argv[beforeIndex + 1];
  const clients: Array<{ name: string; run: Runner }> = [{ name: 'ChatClient (undici dispatch + SseReader)', run: chatClientRunner(ChatClient) }];
  if (beforeDir !== undefined) {
    const before = (await import(pathToFileURL(join(beforeDir, 'src/client/chat-client.ts')).href)) as { ChatClient: typeof ChatClient };
    clients.push({ name: `ChatClient of ${beforeDir}`, run: chatClientRunner(before.ChatClient) });
  }
  clients.push({ name: 'fetch + eventsource-parser@3', run: runFetch }, { name: 'floor: node:http + split on blank lines', run: runFloor });
  const { child, url } = await startServerProcess();
  try {
    // Warm every path up (JIT, connection setup) before measuring.
    for (const client of clients) await measure(client.run, url, 20, 200, 1, 1);
    const events = BATCHES * streams * eventsPerStream;
    const table = new Table({
      head: ['events per read', 'client', 'µs CPU / event', 'of which user', 'µs CPU / request', 'events / s (wall)', 'CPU vs floor'],
      style: process.stdout.isTTY ? undefined : { head: [], border: [] },
    });
    // burst 1: one event per write, as servers stream; burst 16: parsing cost with the per-read I/O cost amortized.
    for (const burst of [1, 16]) {
      const all: Measured[][] = clients.map(() => []);
      for (let round = 0; round < rounds; round++) {
        // Alternate the order round by round, so no client always runs after the same one.
        const order = clients.map((_, i) => i);
        if (round % 2 === 1) order.reverse();
        for (const i of order) {
          all[i]!.push(await measure(clients[i]!.run, url, streams, eventsPerStream, burst));
        }
      }
      // CPU noise only adds, so the best round is each client's figure; the median per request shows the spread.
      const best = all.map((runs) => runs.reduce((a, b) => (b.usPerEvent < a.usPerEvent ? b : a)));
      const median = all.map((runs) => runs.map((m) => m.usPerEvent).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!);
      const floor = best[best.length - 1]!;
      clients.forEach((client, i) => {
        const m = best[i]!;
        table.push([
          `~${burst}`, client.name, m.usPerEvent.toFixed(2), m.userUsPerEvent.toFixed(2),
          `${Math.round(m.usPerEvent * eventsPerStream)} (median ${Math.round(median[i]! * eventsPerStream)})`,
          Math.round(events / (m.wallMs / 1000)).toString(), `${(m.usPerEvent / floor.usPerEvent).toFixed(2)}x (median ${(median[i]! / median[median.length - 1]!).toFixed(2)}x)`,
        ]);
      });
    }
    console.log(
      `client CPU per SSE event: ${events} events (${BATCHES} batch(es) of ${streams} concurrent streams, ${eventsPerStream} events a request), best of ${rounds} rounds (and their median)`,
    );
    console.log(table.toString());
  } finally {
    child.stdin?.end();
    child.kill();
  }
}

if (process.argv.includes('--server')) runServer();
else await main();
