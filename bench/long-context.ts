// Long-context agentic sessions (issue #14), two figures:
// 1. Flat per-turn cost: one session of 200 steps growing to ~128k tokens (a tool result of ~720 tokens per step),
//    after a shorter warm-up session (JIT), replayed by the engine's own turn code (runTurn: history, local counts,
//    request body, client, record) against a server in a child process (its CPU is not counted), in a child process of
//    its own under --single-threaded (see cpuMs). Client CPU per turn = process.cpuUsage() around runTurn. The session's
//    last 10 turns alternate with a second copy's first 10 (see flatPerTurn). The body's JSON serialization
//    (encodeChatBody: the join of each message's kept JSON) and its send grow with the history by nature; they are
//    measured apart, on the same requests, and reported separately.
//    Claim: CPU per turn without the body, last 10 turns / first 10 turns (medians), within 1.5x.
// 2. Event-loop stalls: the largest event-loop delay (monitorEventLoopDelay, 1 ms resolution) during a run whose second
//    user message is 10 MB, against the same run with a 10 kB message (baseline); and inside a simulator (`serve`'s
//    server) while it receives a 3 MB prompt from another process, against a 3 kB prompt. Each pair is measured
//    --reps times (default 3), interleaved, and printed with its max and p99 delay: the machine is shared and one
//    run's baseline alone moves by several ms. Beside them, busy: the longest gap between two 1 ms ticks less the
//    time the main thread waited for a core (Linux schedstat); and held: busy less the loop's own sleep in its I/O
//    poll (eventLoopUtilization's idle time), the work that held the loop; and step: held less the GC pauses inside the
//    gap (PerformanceObserver's gc entries), the code's own hold, beside the longest GC pause. Each is printed with its
//    median and max.
// Run: node --import tsx bench/long-context.ts [--stall-only] [--reps N] [--case run|serve|serve-admitted] [--probe]
// (--case: that stall case only; --probe: each rep under the CPU profiler, printing what ran in each loop gap of over
// 3 ms held, by function with two callers, and the GC events in it: a diagnosis, its figures are not the bench's.)
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { once } from 'node:events';
import { openSync, readSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { ChatClient } from '../src/client/chat-client.js';
import { encodeChatBody } from '../src/client/request-body.js';
import type { Conversation } from '../src/conversation/types.js';
import { ActiveConversation } from '../src/load/active-conversation.js';
import { StopController } from '../src/load/stop.js';
import { ExpectedCache } from '../src/cache-model/expected-cache.js';
import { runTurn, type TurnContext } from '../src/load/turn.js';
import type { RequestRecord } from '../src/metrics/record.js';
import { startSimulator } from '../src/sim/index.js';
import { Rng } from '../src/util/rng.js';
import { parseAgenticConfig } from '../src/synth/agentic/config.js';
import { generateAgenticSessions } from '../src/synth/agentic/generate.js';
import { defaultTokenCounter } from '../src/tokenizer/index.js';
import { median } from './child-cpu.js';

const BENCH_TIME_LIMIT_MS = 480_000;

// ---- child: a server that answers every step with a streamed tool call, or a client that posts one big prompt ----

function runServer(): void {
  let n = 0;
  const server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      const id = `call_${n++}`;
      const chunk = (delta: unknown, finish: string | null = null): string => `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      let out = chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name: 'tool_0', arguments: '' } }] });
      for (let i = 0; i < 20; i++) out += chunk({ tool_calls: [{ index: 0, function: { arguments: i === 0 ? '{"input": "a' : i === 19 ? ' b"}' : ' w' } }] });
      out += chunk({}, 'tool_calls');
      out += `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: Math.round(bytes / 4), completion_tokens: 21, total_tokens: Math.round(bytes / 4) + 21 } })}\n\ndata: [DONE]\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(out);
    });
  });
  server.listen(0, '127.0.0.1', () => process.send?.((server.address() as { port: number }).port));
  process.on('disconnect', () => process.exit(0));
}

/** Posts one prompt of `chars` characters when the parent says `go` (it says `ready` first), then exits. */
async function runPoster(url: string, chars: number): Promise<void> {
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'word '.repeat(chars / 5) }], max_tokens: 4, stream: false });
  const go = once(process, 'message');
  process.send?.('ready');
  await go;
  const response = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await response.text();
}

if (process.argv[2] === '--server') runServer();
else if (process.argv[2] === '--flat') void flatPerTurn(process.argv[3]!, Number(process.argv[4])).then(() => process.exit(0));
else if (process.argv[2] === '--post') void runPoster(process.argv[3]!, Number(process.argv[4])).then(() => process.exit(0));
else void main();

// ---- parent ----

async function startServerChild(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--server'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [port] = (await once(child, 'message')) as [number];
  return { url: `http://127.0.0.1:${port}`, child };
}

/**
 * The flat part in a child process under `--single-threaded` (see cpuMs); its tables print as they come. Beside it, a
 * TCP sink in this process that reads and drops what the child sends it: the body's send, measured apart.
 */
async function runFlatChild(url: string): Promise<void> {
  const sink = createNetServer((socket) => socket.resume()).listen(0, '127.0.0.1');
  await once(sink, 'listening');
  const sinkPort = (sink.address() as { port: number }).port;
  try {
    const child = spawn(process.execPath, ['--single-threaded', '--import', 'tsx', fileURLToPath(import.meta.url), '--flat', url, String(sinkPort)], { stdio: ['ignore', 'inherit', 'inherit'] });
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`bench/long-context: the flat per-turn child exited with ${code}`);
  } finally {
    sink.close();
  }
}

function context(client: ChatClient, records: RequestRecord[]): TurnContext {
  const observer = { onRecord: (r: RequestRecord) => records.push(r) };
  return {
    request: { stream: true, maxTokens: 64, ignoreEos: false, sendConversationId: false, maxRetries: 0, replayDatasetAnswers: false, keepReasoning: false, verifyOutput: false, endpoint: 'chat', responsesState: 'input' },
    client,
    model: 'm',
    counter: defaultTokenCounter,
    // As a run has it: the global expected-cache model encodes and hashes each prompt (issue #13).
    expectedCache: new ExpectedCache(defaultTokenCounter, { blockSize: 16 }),
    stop: new StopController(),
    observer,
    runStartMs: performance.now(),
    loadStartMs: performance.now(),
    onAnswerMismatch: () => {},
  };
}

/** Runs every step of `conversation` (the warm-up, the stall cases' runs). */
async function replay(ctx: TurnContext, conversation: Conversation): Promise<void> {
  const active = new ActiveConversation(conversation, 0);
  const rng = new Rng(1);
  while (!active.done) {
    const record = await runTurn(ctx, { conversation: active, clientId: 0, rng, warmup: false });
    ctx.observer.onRecord?.(record);
    if (record.status !== 'ok') throw new Error(`turn ${record.turn}: ${record.error}`);
  }
}

/**
 * The process's CPU so far in ms (rusage). The flat part runs in a child of its own under `--single-threaded`
 * (runFlatChild): V8 then compiles and collects on the main thread, so rusage is that one thread's CPU, brought up to
 * date by the kernel at each call. In a process with V8's helper threads it also counted their compiles and GC,
 * accounted at scheduler ticks (4 ms here): bursts of 4-9 ms in single turns of ~1 ms, and below 0 with the body
 * taken off.
 */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

async function flatPerTurn(url: string, sinkPort: number): Promise<void> {
  const config = parseAgenticConfig(
    {
      filetype: 'generate_agentic_sessions',
      num_sessions: 1,
      system_prompt_tokens: { distribution: 'constant', value: 2000 },
      num_tools: 4,
      tool_definition_tokens: { distribution: 'constant', value: 100 },
      user_turns: { distribution: 'constant', value: 1 },
      steps_per_turn: { distribution: 'constant', value: 199 },
      parallel_calls: { distribution: 'constant', value: 1 },
      user_tokens: { distribution: 'constant', value: 200 },
      tool_argument_tokens: { distribution: 'constant', value: 20 },
      tool_output_tokens: { distribution: 'constant', value: 720 },
      assistant_tokens: { distribution: 'constant', value: 50 },
    },
    'bench',
  );
  const [session] = (await generateAgenticSessions(config, { counter: defaultTokenCounter, seed: 1 })).conversations;
  const client = new ChatClient({ baseUrl: url, connections: 1, requestTimeoutMs: 30_000 });
  // Warm-up: the same code on a copy of the session's first 40 steps, so the first measured turns are not JIT time.
  const warm: Conversation = { ...session!, id: 'warm-up', messages: session!.messages.slice(0, 82) };
  await replay(context(client, []), warm);
  const sink = connect(sinkPort, '127.0.0.1');
  await once(sink, 'connect');
  const longRun = measuredSession(client, session!, sink);
  const firstRun = measuredSession(client, { ...session!, id: 'first-turns' }, sink);
  // The long session grows to its last WINDOW turns; then the last WINDOW turns and a second copy's first WINDOW turns
  // are measured alternately (first 1, last 1, first 2, ...). This machine's CPU per unit of work drifts by 2-3x within
  // seconds (other tenants); measured apart, the two windows also compared two moments of it.
  while (longRun.turnsLeft() > WINDOW) await longRun.turn();
  for (let i = 0; i < WINDOW; i++) {
    await firstRun.turn();
    await longRun.turn();
  }
  await client.close();
  sink.destroy();
  if (!longRun.active.done) throw new Error('bench/long-context: the long session has turns left');
  const first = firstRun.window(0, WINDOW);
  const middle = longRun.window(100, 100 + WINDOW);
  const lastTen = longRun.window(longRun.records.length - WINDOW, longRun.records.length);
  // Single turns still hold V8's compiles, now on the main thread (LC_RAW=1 prints each turn): the medians say what a
  // turn typically costs; the means, beside them, move with where the compiles land. The claim is read on the medians.
  if (process.env.LC_RAW) console.error(first.withoutBody.map((x) => x.toFixed(2)).join(' '), '|', lastTen.withoutBody.map((x) => x.toFixed(2)).join(' '));
  const table = new Table({ head: ['turns', 'prompt tokens', 'client CPU/turn (ms)', 'body serialize+send (ms)', 'CPU/turn without body (ms), mean', 'median', 'of which expected cache (ms)'], style: { head: [], border: [] } });
  const row = (label: string, w: TurnWindow): void => {
    table.push([label, Math.round(w.promptTokens), mean(w.turn).toFixed(3), mean(w.body).toFixed(3), mean(w.withoutBody).toFixed(3), median(w.withoutBody).toFixed(3), mean(w.cache).toFixed(3)]);
  };
  row('first 10 (alternating with the last 10)', first);
  row('100-110 (growing)', middle);
  row('last 10', lastTen);
  console.log(`one session, ${longRun.records.length} turns, up to ${longRun.records.at(-1)!.input_num_tokens} prompt tokens`);
  console.log(table.toString());
  const ratio = (of: (xs: number[]) => number): string => (of(lastTen.withoutBody) / of(first.withoutBody)).toFixed(2);
  console.log(`CPU per turn without the body, last 10 / first 10: ${ratio(median)}x by the medians (claim: within 1.5x), ${ratio(mean)}x by the means`);
  console.log(`expected cache per turn, last 10 / first 10: ${(mean(lastTen.cache) / mean(first.cache)).toFixed(2)}x`);
}

/** Turns measured per window: the claim's first and last 10. */
const WINDOW = 10;

/** A window of a session's measured turns (ms of CPU each) and its mean prompt length. */
interface TurnWindow {
  turn: number[];
  body: number[];
  withoutBody: number[];
  cache: number[];
  promptTokens: number;
}

/**
 * A session replayed one turn at a time on its own context (its own expected-cache model), each turn's CPU measured:
 * the turn (runTurn: history, local counts, request body, client, record), and apart, before it and outside its
 * window, the body serialized again (the kept per-message JSON makes this the join alone) and written to `sink`, a
 * loopback socket to a reader in another process, as the request's own send writes it: what grows with the history
 * by nature (a 480 KB write costs the sender ~0.1-0.15 ms more CPU than a 20 KB one here). The expected-cache
 * model's part of each turn (rendering, encoding and hashing the prompt) is timed apart too: it must not grow with
 * the history with a message-by-message template (ChatML here).
 */
function measuredSession(client: ChatClient, conversation: Conversation, sink: Socket) {
  const records: RequestRecord[] = [];
  const turn: number[] = [];
  const body: number[] = [];
  const cache: number[] = [];
  const ctx = context(client, records);
  const model = ctx.expectedCache;
  if (model !== undefined) {
    const begin = model.begin.bind(model);
    model.begin = (...args) => {
      const t0 = cpuMs();
      const ticket = begin(...args);
      cache.push(cpuMs() - t0);
      return ticket;
    };
  }
  const active = new ActiveConversation(conversation, 0);
  const rng = new Rng(1);
  const requests = conversation.messages.filter((m) => m.role === 'assistant').length;
  return {
    active,
    records,
    turnsLeft: (): number => requests - records.length,
    async turn(): Promise<void> {
      const b0 = cpuMs();
      const encoded = encodeChatBody({ model: 'm', messages: active.requestMessages(), stream: true, tools: active.tools });
      if (Buffer.isBuffer(encoded)) sink.write(encoded);
      else for (const chunk of encoded) sink.write(chunk);
      const t0 = cpuMs();
      const record = await runTurn(ctx, { conversation: active, clientId: 0, rng, warmup: false });
      turn.push(cpuMs() - t0);
      body.push(t0 - b0);
      ctx.observer.onRecord?.(record);
      if (record.status !== 'ok') throw new Error(`turn ${record.turn}: ${record.error}`);
    },
    window(from: number, to: number): TurnWindow {
      const withoutBody = turn.slice(from, to).map((t, i) => t - body[from + i]!);
      return { turn: turn.slice(from, to), body: body.slice(from, to), withoutBody, cache: cache.slice(from, to), promptTokens: mean(records.slice(from, to).map((r) => r.input_num_tokens)) };
    },
  };
}

/**
 * The event loop's delay while `work` runs, in ms: the largest and the 99th percentile (wall time), and `busyMaxMs`:
 * the longest gap between two ticks of a 1 ms interval less the time the main thread waited in the kernel's run
 * queue meanwhile (Linux's per-thread schedstat, exact at each switch). The wall delay includes waiting for a core
 * while other processes run (on a shared 2-core machine, often more than the work itself); busy leaves that out,
 * but still counts the thread's sleeps (see runQueueWaitReader and heldMaxMs). NaN where schedstat does not exist.
 */
interface LoopDelay {
  maxMs: number;
  p99Ms: number;
  busyMaxMs: number;
  /**
   * Busy less the time the loop slept in its poll for I/O (libuv's idle time, as eventLoopUtilization reads it): a
   * 1 ms interval's tick comes up to ~1 ms late from an idle loop (its timers are kept in whole ms), which busy counts.
   */
  heldMaxMs: number;
  /**
   * Held less the GC pauses inside the gap (PerformanceObserver's `gc` entries, wall time): the longest the loop was
   * held by code, chatload's steps and the runtime's other work, rather than by V8's collector. The 5 ms bound is
   * on per-request steps; GC pauses are V8's, reported apart in gcMaxMs. (A pause whose thread also waited for a core
   * is subtracted whole, so this can read low under load: read it with held.)
   */
  stepMaxMs: number;
  /** The longest GC pause during the work (wall time, any kind). */
  gcMaxMs: number;
}

/**
 * Ms the main thread has waited in the run queue so far (NaN off Linux). Read through one descriptor: ~5 µs. (The
 * file's first field, the thread's time on a core, is of no use here: for a running thread it is as of its last
 * scheduler tick, up to 4 ms stale on this machine; a gap read 4.5 ms on a core in 3.4 ms of wall time. The wait is
 * settled each time the thread gets a core, as it has when it reads this.) So busy, wall less waits, also counts
 * the thread's sleeps in the kernel: on a lock (a GC pause waiting for its helper threads to get a core), a page fault.
 */
function runQueueWaitReader(): () => number {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return () => NaN;
  }
  const buffer = Buffer.alloc(128);
  return () => Number(buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0)).split(' ')[1]) / 1e6;
}

const runQueueWaitMs = runQueueWaitReader();

/** A loop gap held over PROBE_HELD_MS (see LoopDelay), kept by the probe (`--probe`): its span on performance.now()'s clock. */
interface Gap {
  fromMs: number;
  toMs: number;
  busyMs: number;
  heldMs: number;
}

const PROBE_HELD_MS = 3;
/** `--probe`: each rep runs under the CPU profiler and prints what ran in each gap held over PROBE_HELD_MS. */
function probing(): boolean {
  return process.argv.includes('--probe');
}

/** Gaps held at least this long are kept, to take the GC pauses in them away afterwards (see stepMaxMs). */
const STEP_HELD_MS = 1;

/** GC pauses as PerformanceObserver reports them while it is on; `stop` returns them (delivered or not yet). */
function recordGcPauses(): { pauses: GcPause[]; stop: () => GcPause[] } {
  const pauses: GcPause[] = [];
  const add = (list: { getEntries(): PerformanceEntry[] } | PerformanceEntry[]): void => {
    for (const e of Array.isArray(list) ? list : list.getEntries()) pauses.push({ startMs: e.startTime, durationMs: e.duration, kind: String((e as unknown as { detail?: { kind?: number } }).detail?.kind ?? '') });
  };
  const observer = new PerformanceObserver(add);
  observer.observe({ entryTypes: ['gc'] });
  return {
    pauses,
    stop: () => {
      add(observer.takeRecords());
      observer.disconnect();
      return pauses;
    },
  };
}

interface GcPause {
  startMs: number;
  durationMs: number;
  kind: string;
}

/** Ms of GC pause inside [fromMs, toMs]. */
function gcWithin(pauses: readonly GcPause[], fromMs: number, toMs: number): number {
  let ms = 0;
  for (const p of pauses) ms += Math.max(0, Math.min(toMs, p.startMs + p.durationMs) - Math.max(fromMs, p.startMs));
  return ms;
}

async function loopDelayDuring(work: () => Promise<void>): Promise<LoopDelay> {
  const session = probing() ? await startProbe() : undefined;
  const gc = recordGcPauses();
  const gaps: Gap[] = [];
  const h = monitorEventLoopDelay({ resolution: 1 });
  let lastAt = performance.now();
  let lastWait = runQueueWaitMs();
  let lastIdle = performance.eventLoopUtilization().idle;
  let busyMaxMs = 0;
  let heldMaxMs = 0;
  const tick = (): void => {
    const at = performance.now();
    const wait = runQueueWaitMs();
    const idle = performance.eventLoopUtilization().idle;
    const busyMs = at - lastAt - (wait - lastWait);
    const heldMs = busyMs - (idle - lastIdle);
    heldMaxMs = Math.max(heldMaxMs, heldMs);
    if (heldMs > STEP_HELD_MS) gaps.push({ fromMs: lastAt, toMs: at, busyMs, heldMs });
    busyMaxMs = Math.max(busyMaxMs, busyMs);
    lastAt = at;
    lastWait = wait;
    lastIdle = idle;
  };
  const probe = setInterval(tick, 1);
  h.enable();
  await work();
  h.disable();
  clearInterval(probe);
  tick();
  const pauses = gc.stop();
  let stepMaxMs = Math.min(heldMaxMs, STEP_HELD_MS);
  for (const g of gaps) stepMaxMs = Math.max(stepMaxMs, g.heldMs - gcWithin(pauses, g.fromMs, g.toMs));
  const gcMaxMs = Math.max(0, ...pauses.map((p) => p.durationMs));
  if (session !== undefined)
    await printProbe(
      session,
      gaps.filter((g) => g.heldMs > PROBE_HELD_MS),
      pauses,
    );
  return { maxMs: h.max / 1e6, p99Ms: h.percentile(99) / 1e6, busyMaxMs, heldMaxMs, stepMaxMs, gcMaxMs };
}

// ---- the probe (--probe): where each long gap's time went ----

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

async function startProbe(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return session;
}

/** Prints, for each gap, the functions its profile samples fell in (self time, with two callers) and its GC events. */
async function printProbe(session: Session, gaps: Gap[], gcEvents: readonly GcPause[]): Promise<void> {
  const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
  session.disconnect();
  // The profile's clock is µs of the same monotonic clock as hrtime; performance.now() is ms since timeOrigin on it.
  const originUs = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const name = (id: number | undefined): string => {
    if (id === undefined) return '';
    const f = byId.get(id)!.callFrame;
    return `${f.functionName || '(anon)'} ${f.url.replace(/^.*\/(src|node_modules|bench)\//, '$1/')}:${f.lineNumber + 1}`;
  };
  let t = profile.startTime;
  const samples = profile.samples.map((id, i) => ({ id, atMs: (t += profile.timeDeltas[i]!) / 1000 - originUs / 1000 }));
  for (const gap of gaps) {
    const tally = new Map<string, number>();
    let n = 0;
    for (const s of samples) {
      if (s.atMs <= gap.fromMs || s.atMs > gap.toMs) continue;
      n++;
      const p1 = parent.get(s.id);
      const key = [name(s.id), name(p1), name(p1 === undefined ? undefined : parent.get(p1))].filter(Boolean).join(' < ');
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
    const gcs = gcEvents.filter((e) => e.startMs < gap.toMs && e.startMs + e.durationMs > gap.fromMs).map((e) => `gc(kind ${e.kind}) ${e.durationMs.toFixed(1)} ms`);
    console.log(`  gap held ${gap.heldMs.toFixed(1)} ms, ${gap.busyMs.toFixed(1)} busy, ${(gap.toMs - gap.fromMs).toFixed(1)} wall:, ${n} samples ${gcs.join(', ')}`);
    for (const [key, count] of [...tally].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`    ${(count / 10).toFixed(1)} ms  ${key}`);
  }
}

/** A user message of `chars` characters, made once per size: a run's dataset is parsed before the run starts. */
const contents = new Map<number, string>();

/**
 * The message of `chars` characters, flat as JSON.parse gives it (a repeat() rope would be flattened on first read, a
 * stall of its own), made once: a run parses its dataset before it starts. (A 10 MB string made just before a rep is
 * promoted out of the young generation by a scavenge during it: 10-14 ms pauses under --trace-gc-nvp. Only the first
 * large rep of a process sees that now, with its JIT compilation.)
 */
function content(chars: number): string {
  let text = contents.get(chars);
  if (text === undefined) {
    text = Buffer.from('word '.repeat(chars / 5)).toString();
    contents.set(chars, text);
  }
  return text;
}

async function bigMessageRun(url: string, chars: number): Promise<LoopDelay> {
  const conversation: Conversation = {
    id: 'big',
    messages: [
      { role: 'user', content: 'hello there' },
      { role: 'assistant', content: 'hi' },
      { role: 'user', content: content(chars) },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'and now?' },
    ],
  };
  const client = new ChatClient({ baseUrl: url, connections: 2, requestTimeoutMs: 60_000 });
  try {
    return await loopDelayDuring(() => replay(context(client, []), conversation));
  } finally {
    await client.close();
  }
}

/**
 * The simulator's largest event-loop delay while a prompt of `chars` arrives from another process (after a warm-up
 * one). The 3 MB prompt is 1.2M tokens of the approximate tokenizer, over max_model_len (1M) and the 70,000 KV
 * blocks: it is refused with a 400 once tokenized, so the figure is the request's reading, parsing and tokenizing.
 * With `admit` (2M, 100,000 blocks) the engine prefills it and answers: its handling of 75,000 blocks is measured too.
 */
async function servePrompt(chars: number, admit = false): Promise<LoopDelay> {
  const sim = await startSimulator({ profile: 'agentic', modelName: 'm', config: { max_model_len: admit ? 2_000_000 : 1_000_000, num_gpu_blocks: admit ? 100_000 : 70_000, prefill_ms_per_token: 0.0001 } });
  // The poster is started and ready before the measured window: spawning a process held this loop 5-12 ms itself.
  const poster = async (n: number): Promise<() => Promise<void>> => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--post', sim.url, String(n)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await once(child, 'message');
    return async () => {
      const exited = once(child, 'exit');
      child.send('go');
      await exited;
    };
  };
  try {
    await (await poster(3_000))();
    const post = await poster(chars);
    return await loopDelayDuring(post);
  } finally {
    await sim.close();
  }
}

/** Baseline and large runs of each stall case, interleaved `reps` times; prints every figure and the worst. */
async function stalls(url: string, reps: number, only: string | undefined): Promise<void> {
  const all = [
    { label: 'run: a 10 MB user message (baseline 10 kB)', measure: (chars: number) => bigMessageRun(url, chars), small: 10_000, large: 10_000_000 },
    { label: 'serve: a 3 MB prompt arrives (baseline 3 kB)', measure: (chars: number) => servePrompt(chars), small: 3_000, large: 3_000_000 },
    { label: 'serve-admitted: the same, prefilled and answered', measure: (chars: number) => servePrompt(chars, true), small: 3_000, large: 3_000_000 },
  ];
  const cases = only === undefined ? all : all.filter((c) => c.label.startsWith(`${only}:`));
  const fmt = (ds: LoopDelay[], key: keyof LoopDelay): string => ds.map((d) => d[key].toFixed(1)).join(' / ');
  const worst = (ds: LoopDelay[]): number => Math.max(...ds.map((d) => d.maxMs));
  const table = new Table({ head: ['event-loop delay (ms), each rep', 'baseline max', 'large max', 'baseline p99', 'large p99', 'baseline busy max', 'large busy max', 'baseline held max', 'large held max', 'large step max (held less GC)', 'large GC pause max', 'worst large / worst baseline'], style: { head: [], border: [] } });
  const marked = probing() || process.execArgv.some((a) => a.startsWith('--trace-gc'));
  const summary: string[] = [];
  for (const c of cases) {
    const small: LoopDelay[] = [];
    const large: LoopDelay[] = [];
    for (let i = 0; i < reps; i++) {
      // Marks to read a probe's or --trace-gc's lines against (performance.now(), as --trace-gc's times).
      if (marked) console.log(`${c.label}, rep ${i + 1}, baseline (at ${performance.now().toFixed(0)} ms):`);
      small.push(await c.measure(c.small));
      if (marked) console.log(`${c.label}, rep ${i + 1}, large (at ${performance.now().toFixed(0)} ms):`);
      large.push(await c.measure(c.large));
    }
    table.push([c.label, fmt(small, 'maxMs'), fmt(large, 'maxMs'), fmt(small, 'p99Ms'), fmt(large, 'p99Ms'), fmt(small, 'busyMaxMs'), fmt(large, 'busyMaxMs'), fmt(small, 'heldMaxMs'), fmt(large, 'heldMaxMs'), fmt(large, 'stepMaxMs'), fmt(large, 'gcMaxMs'), (worst(large) / worst(small)).toFixed(1)]);
    const over = (ds: LoopDelay[], key: keyof LoopDelay): string => {
      const xs = ds.map((d) => d[key]);
      return `median ${median(xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}`;
    };
    summary.push(`${c.label.split(':')[0]}: busy max over reps: baseline ${over(small, 'busyMaxMs')}; large ${over(large, 'busyMaxMs')}. Held max: baseline ${over(small, 'heldMaxMs')}; large ${over(large, 'heldMaxMs')}. Step max (held less GC): baseline ${over(small, 'stepMaxMs')}; large ${over(large, 'stepMaxMs')}. GC pause max: baseline ${over(small, 'gcMaxMs')}; large ${over(large, 'gcMaxMs')}. p99: baseline ${over(small, 'p99Ms')}; large ${over(large, 'p99Ms')}`);
  }
  console.log(table.toString());
  for (const line of summary) console.log(line);
}

async function main(): Promise<void> {
  const timer = setTimeout(() => {
    console.error('bench/long-context: over its time limit');
    process.exit(1);
  }, BENCH_TIME_LIMIT_MS);
  const args = process.argv.slice(2);
  const repsAt = args.indexOf('--reps');
  const reps = repsAt >= 0 ? Number(args[repsAt + 1]) : 3;
  const caseAt = args.indexOf('--case');
  const only = caseAt >= 0 ? args[caseAt + 1] : undefined;
  const { url, child } = await startServerChild();
  try {
    if (!args.includes('--stall-only')) await runFlatChild(url);
    await stalls(url, reps, only);
  } finally {
    child.kill();
    clearTimeout(timer);
  }
}
