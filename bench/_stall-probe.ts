// TEMP (not committed): finds callbacks that hold the loop > 4 ms during a 10 MB run, with a CPU profile.
import { createHook } from 'node:async_hooks';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
import { ChatClient } from '../src/client/chat-client.js';
import type { Conversation } from '../src/conversation/types.js';
import { ActiveConversation } from '../src/engine/active-conversation.js';
import { StopController } from '../src/engine/stop.js';
import { ExpectedCache } from '../src/engine/expected-cache.js';
import { runTurn } from '../src/engine/turn.js';
import { Rng } from '../src/synth/rng.js';
import { defaultTokenCounter } from '../src/tokenizer/index.js';

const child = spawn(process.execPath, ['--import', 'tsx', 'bench/long-context.ts', '--server'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const [port] = (await once(child, 'message')) as [number];
const url = `http://127.0.0.1:${port}`;
const long: Array<{ type: string; startUs: number; ms: number }> = [];
const starts = new Map<number, { t: bigint; type: string }>();
const types = new Map<number, string>();
const hook = createHook({
  init(id, type) { types.set(id, type); },
  before(id) { starts.set(id, { t: process.hrtime.bigint(), type: types.get(id) ?? '?' }); },
  after(id) {
    const s = starts.get(id);
    if (s === undefined) return;
    starts.delete(id);
    const ms = Number(process.hrtime.bigint() - s.t) / 1e6;
    if (ms > 4) long.push({ type: s.type, startUs: Number(s.t / 1000n), ms });
  },
});
async function run(chars: number): Promise<number> {
  const conversation: Conversation = { id: 'big', messages: [
    { role: 'user', content: 'hello there' }, { role: 'assistant', content: 'hi' },
    { role: 'user', content: Buffer.from('word '.repeat(chars / 5)).toString() }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'and now?' } ] };
  const client = new ChatClient({ baseUrl: url, connections: 2, requestTimeoutMs: 60_000 });
  const ctx = { request: { stream: true, maxTokens: 64, ignoreEos: false, sendConversationId: false, maxRetries: 0, replayDatasetAnswers: false, keepReasoning: false, verifyOutput: false, endpoint: 'chat', responsesState: 'input' },
    client, model: 'm', counter: defaultTokenCounter, expectedCache: new ExpectedCache(defaultTokenCounter, { blockSize: 16 }), stop: new StopController(), observer: {}, runStartMs: performance.now(), loadStartMs: performance.now(), onAnswerMismatch: () => {} } as never;
  const h = monitorEventLoopDelay({ resolution: 1 }); h.enable();
  const active = new ActiveConversation(conversation, 0);
  while (!active.done) await runTurn(ctx, active, 0, new Rng(1), false);
  h.disable(); await client.close();
  return h.max / 1e6;
}
await run(10_000);
await run(10_000_000);
const session = new Session(); session.connect();
await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 100 }); await session.post('Profiler.start');
hook.enable();
const max = await run(10_000_000);
hook.disable();
const { profile } = await session.post('Profiler.stop');
writeFileSync('/tmp/stall/probe.cpuprofile', JSON.stringify(profile));
writeFileSync('/tmp/stall/probe-long.json', JSON.stringify(long));
console.log('max delay', max.toFixed(1), 'long callbacks', long.length);
child.kill();
