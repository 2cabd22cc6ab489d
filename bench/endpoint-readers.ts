// Client CPU per streamed event of each endpoint's reader (--endpoint chat|responses|completions), in process: the
// same SseReader and ResponseCollector, fed pre-built streams in each API's real format (vLLM's chat and completions
// chunks, OpenAI's Responses events with their `event:` lines), cut into reads of 16 events. The network is left out
// on purpose (bench/client-sse.ts measures it for chat): this isolates what an endpoint's format and reader add.
// Figures are ratios against chat in the same run; a fourth row reads the chat stream with every chunk JSON.parsed
// (`scanChunks: false`), the path chat took before chunk shapes (client/chunk-shape.ts, issue 17 part 4).
// Run: node --import tsx bench/endpoint-readers.ts [--events 20000]
import Table from 'cli-table3';
import { ENDPOINTS, type EndpointName } from '../src/client/endpoints/index.js';
import { ResponseCollector } from '../src/client/response-collector.js';
import { SseReader } from '../src/client/sse-reader.js';

function argNumber(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index === -1 ? Number.NaN : Number(process.argv[index + 1]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

const EVENTS = argNumber('events', 20_000);
const ROUNDS = argNumber('rounds', 15);
const PER_READ = 16;
const BENCH_TIME_LIMIT_MS = 60_000;

const data = (json: object): string => `data: ${JSON.stringify(json)}\n\n`;

/** One answer of EVENTS tokens in each API's streamed format, as the reads a socket would give. */
function stream(endpoint: EndpointName): Uint8Array[] {
  const events: string[] = [];
  if (endpoint === 'responses') {
    let seq = 0;
    const ev = (type: string, fields: object): string => `event: ${type}\n${data({ type, sequence_number: seq++, ...fields })}`;
    const response = { id: 'resp_bench', object: 'response', created_at: 1, status: 'in_progress', model: 'm', output: [], usage: null };
    events.push(ev('response.created', { response }));
    for (let i = 0; i < EVENTS; i++) events.push(ev('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: ` tok${i}`, logprobs: [] }));
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: EVENTS, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 10 + EVENTS };
    events.push(ev('response.completed', { response: { ...response, status: 'completed', usage } }));
  } else {
    const head = endpoint === 'chat' ? { id: 'chatcmpl-b', object: 'chat.completion.chunk', created: 1, model: 'm' } : { id: 'cmpl-b', object: 'text_completion', created: 1, model: 'm' };
    for (let i = 0; i < EVENTS; i++) {
      const choice = endpoint === 'chat' ? { index: 0, delta: { content: ` tok${i}` }, logprobs: null, finish_reason: null } : { index: 0, text: ` tok${i}`, logprobs: null, finish_reason: null };
      events.push(data({ ...head, choices: [choice] }));
    }
    events.push(data({ ...head, choices: [], usage: { prompt_tokens: 10, completion_tokens: EVENTS, total_tokens: 10 + EVENTS } }), 'data: [DONE]\n\n');
  }
  const reads: Uint8Array[] = [];
  for (let i = 0; i < events.length; i += PER_READ) reads.push(Buffer.from(events.slice(i, i + PER_READ).join('')));
  return reads;
}

/** A row of the table: an endpoint's reader, or chat with every chunk JSON.parsed. */
type Row = EndpointName | 'chat, every chunk JSON.parsed';
const PARSE_ONLY = 'chat, every chunk JSON.parsed';

/** Parses the reads once; returns the ms it took (and checks the answer came whole). */
function readOnce(row: Row, reads: readonly Uint8Array[]): number {
  const endpoint: EndpointName = row === PARSE_ONLY ? 'chat' : row;
  const startMs = performance.now();
  const collector = new ResponseCollector(startMs, [], undefined, { scanChunks: row !== PARSE_ONLY });
  const reader = ENDPOINTS[endpoint].reader(collector);
  const sse = new SseReader((text, atMs) => reader.onSseEvent(text, atMs));
  for (const read of reads) sse.push(read, performance.now());
  sse.end(performance.now());
  const ms = performance.now() - startMs;
  if (!collector.finished || collector.result.error !== undefined || collector.result.numTokenChunks !== EVENTS) {
    throw new Error(`${endpoint}: the answer did not come whole (${collector.result.error?.message ?? collector.result.numTokenChunks})`);
  }
  return ms;
}

const deadline = performance.now() + BENCH_TIME_LIMIT_MS;
const endpoints: Row[] = ['chat', 'completions', 'responses', PARSE_ONLY];
const inputs = new Map(endpoints.map((e) => [e, stream(e === PARSE_ONLY ? 'chat' : e)] as const));
const times = new Map<Row, number[]>(endpoints.map((e) => [e, []]));
// Interleaved rounds (after a warm-up each), so machine noise falls on all three alike; the median round counts.
for (const e of endpoints) readOnce(e, inputs.get(e)!);
for (let round = 0; round < ROUNDS && performance.now() < deadline; round++) for (const e of endpoints) times.get(e)!.push(readOnce(e, inputs.get(e)!));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const chatUs = (median(times.get('chat')!) * 1000) / EVENTS;
const table = new Table({ head: ['endpoint', 'bytes per event', 'µs per event (median round)', 'vs chat'], style: { head: [], border: [] } });
for (const e of endpoints) {
  const us = (median(times.get(e)!) * 1000) / EVENTS;
  const bytes = inputs.get(e)!.reduce((n, r) => n + r.length, 0) / EVENTS;
  table.push([e, bytes.toFixed(0), us.toFixed(2), `${(us / chatUs).toFixed(2)}x`]);
}
console.log(`${EVENTS} events per answer, ${PER_READ} per read, ${times.get('chat')!.length} rounds`);
console.log(table.toString());
