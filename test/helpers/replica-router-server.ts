// N replicas behind one port, as a router fronts them (issue #31): llm-d's inference scheduler, NVIDIA Dynamo's
// router, the SGLang router and vLLM's production-stack router each pick one model server per request. chatload's
// simulator names the replica in `x-chatload-replica` (the header this server sends by default); the real routers send
// none (docs/ENGINES.md, "Replica headers"), which the `header: false` mode reproduces. Each replica keeps its own
// prefix cache (the longest message prefix it has seen) and its own vLLM-named /metrics counters at
// /replicas/<i>/metrics (vllm:request_success_total, vllm:prompt_tokens_total, vllm:prefix_cache_queries_total and
// vllm:prefix_cache_hits_total, as vllm/v1/metrics/loggers.py names them): the per-replica truth tests compare with.
//
// `dynamo: true` reproduces NVIDIA Dynamo's frontend (ai-dynamo/dynamo): no replica header; the worker that served is
// named in the body, a top-level `nvext.worker_id` {prefill_worker_id, prefill_dp_rank, decode_worker_id,
// decode_dp_rank} on the stream's first chunk, only when the request asked with `nvext.extra_fields: ["worker_id"]`
// (docs/pages/components/frontend/nvext.md; the first item of the router's stream, lib/bindings/python/rust/llm/kv.rs
// `inject_worker_id_from_tracker`). Worker ids are etcd lease ids, u64 past 2^53 (DYNAMO_WORKER_IDS). Its /metrics
// page has the frontend's dynamo_frontend_* names (lib/runtime/src/metrics/prometheus_names.rs), a block size among
// them, and no engine's. Its usage leaves `prompt_tokens_details` out when the cached tokens are 0, as Dynamo's
// backends build it (components/src/dynamo/common/utils/completion_usage.py), and always with `dynamoCounts: false`
// (workers that report no cached tokens). Its Responses API answers with no usage, and names the worker only in a
// whole body (dynamoResponse).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { chunkJson, sseEvent, usageChunkJson } from './scripted-server.js';

/** How the router picks a replica: in turn, or by the conversation's first message (a session stays on one). */
export type TestRouting = 'round-robin' | 'sticky';

/** One replica's truth: what it served. */
export interface ReplicaTruth {
  requests: number;
  promptTokens: number;
  cachedTokens: number;
}

/** A running replica router. */
export interface ReplicaRouterServer {
  url: string;
  /** Each replica's counters, by index. */
  replicas: ReplicaTruth[];
  /** The replica index of every chat request, in arrival order, with its first message's text and its `nvext`, if any. */
  routed: Array<{ replica: number; first: string; nvext?: unknown }>;
  close(): Promise<void>;
}

export interface ReplicaRouterOptions {
  replicas: number;
  routing: TestRouting;
  /** Send the replica's name in `x-chatload-replica`. @default true */
  header?: boolean;
  /** The header's value for replica i. @default String(i) */
  name?: (index: number) => string;
  /** Each replica's KV blocks of 16 tokens, stated on its page as vLLM does (`vllm:cache_config_info`); unset: none stated. */
  kvBlocks?: number;
  /** Behave as NVIDIA Dynamo's frontend (see the top): the worker in the body when asked, no header. */
  dynamo?: boolean;
  /** With `dynamo`: whether the workers report cached tokens (then only the nonzero ones reach the usage). @default true */
  dynamoCounts?: boolean;
}

/** Replica i's Dynamo worker id (digits: past 2^53, a JS number would round them). */
export const DYNAMO_WORKER_IDS = ['7587891994254240587', '7587891994254240588', '7587891994254240589', '7587891994254241601'];

/** The first chunk with Dynamo's `nvext.worker_id` for replica `index`, as text (the ids' digits kept exact). */
function dynamoFirstChunk(index: number): string {
  const id = DYNAMO_WORKER_IDS[index]!;
  const chunk = JSON.stringify(chunkJson({ role: 'assistant', content: 'Hello' }));
  return `${chunk.slice(0, -1)},"nvext":{"worker_id":{"prefill_worker_id":${id},"prefill_dp_rank":0,"decode_worker_id":${id},"decode_dp_rank":0}}}`;
}

const ANSWER = 'Hello there';

/**
 * Dynamo's Responses API (lib/llm/src/protocols/openai/responses/): a whole body is an NvResponse, the worker in its
 * top-level `nvext` when asked; the stream (stream_converter.rs) carries no nvext; neither carries a usage (`usage:
 * None` in both builders). The ids' digits are written as text, as they are exact past 2^53.
 */
function dynamoResponse(res: ServerResponse, index: number, stream: boolean, askedWorker: boolean): void {
  const response = { id: `resp_${index}`, object: 'response', status: 'completed', output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: ANSWER, annotations: [] }] }], usage: null };
  if (!stream) {
    const id = DYNAMO_WORKER_IDS[index]!;
    const nvext = askedWorker ? `,"nvext":{"worker_id":{"prefill_worker_id":${id},"prefill_dp_rank":0,"decode_worker_id":${id},"decode_dp_rank":0}}` : '';
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(`${JSON.stringify(response).slice(0, -1)}${nvext}}`);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const event = (type: string, fields: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
  res.write(event('response.created', { response: { ...response, status: 'in_progress', output: [] } }));
  for (const delta of ['Hello', ' there']) res.write(event('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta }));
  res.end(event('response.completed', { response }));
}

/** Prompt tokens of a message: a fixed count from its text, as a server's tokenizer would give one. */
const messageTokens = (m: { content?: unknown }): number => Math.ceil(String(m.content ?? '').length / 4) + 4;

export async function startReplicaRouter(options: ReplicaRouterOptions): Promise<ReplicaRouterServer> {
  const replicas: ReplicaTruth[] = Array.from({ length: options.replicas }, () => ({ requests: 0, promptTokens: 0, cachedTokens: 0 }));
  const caches = replicas.map(() => new Set<string>());
  const routed: ReplicaRouterServer['routed'] = [];
  let next = 0;
  const pick = (first: string): number => {
    if (options.routing === 'round-robin') return next++ % options.replicas;
    let h = 0;
    for (let i = 0; i < first.length; i++) h = (h * 31 + first.charCodeAt(i)) >>> 0;
    return h % options.replicas;
  };
  const chat = (body: string, res: ServerResponse, responses: boolean): void => {
    const request = JSON.parse(body) as { messages?: Array<{ role: string; content?: unknown }>; input?: Array<{ role: string; content?: unknown }>; stream?: boolean; nvext?: { extra_fields?: unknown } };
    const messages = (responses ? request.input : request.messages) ?? [];
    const first = String(messages[0]?.content ?? '');
    const index = pick(first);
    routed.push({ replica: index, first, nvext: request.nvext });
    const cache = caches[index]!;
    const key = (n: number): string => JSON.stringify(messages.slice(0, n).map((m) => [m.role, m.content]));
    const prompt = messages.reduce((sum, m) => sum + messageTokens(m), 0);
    // The longest prefix of whole messages this replica has cached (never the whole prompt: its last message is new).
    let cachedMessages = 0;
    for (let n = messages.length - 1; n > 0; n--) {
      if (cache.has(key(n))) {
        cachedMessages = n;
        break;
      }
    }
    const cached = messages.slice(0, cachedMessages).reduce((sum, m) => sum + messageTokens(m), 0);
    for (let n = 1; n <= messages.length; n++) cache.add(key(n));
    cache.add(JSON.stringify([...messages.map((m) => [m.role, m.content]), ['assistant', ANSWER]]));
    const truth = replicas[index]!;
    truth.requests++;
    truth.promptTokens += prompt;
    truth.cachedTokens += cached;
    const askedWorker = Array.isArray(request.nvext?.extra_fields) && request.nvext.extra_fields.includes('worker_id');
    if (responses) return dynamoResponse(res, index, request.stream === true, askedWorker);
    const headers: Record<string, string> = { 'content-type': 'text/event-stream' };
    if (options.header !== false && !options.dynamo) headers['x-chatload-replica'] = options.name?.(index) ?? String(index);
    res.writeHead(200, headers);
    res.write(sseEvent(options.dynamo && askedWorker ? dynamoFirstChunk(index) : chunkJson({ role: 'assistant', content: 'Hello' })));
    res.write(sseEvent(chunkJson({ content: ' there' }, 'stop')));
    const reported = !options.dynamo || (options.dynamoCounts !== false && cached > 0);
    res.write(sseEvent(usageChunkJson(prompt, 2, reported ? cached : undefined)));
    res.end(sseEvent('[DONE]'));
  };
  const metrics = (index: number, res: ServerResponse): void => {
    const t = replicas[index]!;
    const lines = [
      '# TYPE vllm:request_success_total counter',
      `vllm:request_success_total{model_name="test-model",finished_reason="stop"} ${t.requests}`,
      '# TYPE vllm:prompt_tokens_total counter',
      `vllm:prompt_tokens_total{model_name="test-model"} ${t.promptTokens}`,
      '# TYPE vllm:prefix_cache_queries_total counter',
      `vllm:prefix_cache_queries_total{model_name="test-model"} ${t.promptTokens}`,
      '# TYPE vllm:prefix_cache_hits_total counter',
      `vllm:prefix_cache_hits_total{model_name="test-model"} ${t.cachedTokens}`,
      // vLLM's gauge of its cache config (vllm/v1/metrics/loggers.py, `vllm:cache_config_info`): its labels carry the
      // values, one per replica.
      ...(options.kvBlocks === undefined ? [] : ['# TYPE vllm:cache_config_info gauge', `vllm:cache_config_info{block_size="16",num_gpu_blocks="${options.kvBlocks}"} 1`]),
    ];
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(`${lines.join('\n')}\n`);
  };
  /** The frontend's own page: its request count and the workers' block size, no engine counter. */
  const dynamoMetrics = (res: ServerResponse): void => {
    const lines = [
      '# TYPE dynamo_frontend_requests_total counter',
      `dynamo_frontend_requests_total{model="test-model",endpoint="chat_completions",request_type="stream",status="success"} ${routed.length}`,
      '# TYPE dynamo_frontend_model_kv_cache_block_size gauge',
      'dynamo_frontend_model_kv_cache_block_size{model="test-model"} 16',
    ];
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(`${lines.join('\n')}\n`);
  };
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '/';
      const replicaPage = /^\/replicas\/(\d+)\/metrics$/.exec(url);
      if (req.method === 'POST' && url === '/v1/chat/completions') return chat(Buffer.concat(chunks).toString('utf8'), res, false);
      if (req.method === 'POST' && url === '/v1/responses' && options.dynamo) return chat(Buffer.concat(chunks).toString('utf8'), res, true);
      if (replicaPage !== null && Number(replicaPage[1]) < options.replicas) return metrics(Number(replicaPage[1]), res);
      if (url === '/metrics' && options.dynamo) return dynamoMetrics(res);
      if (url === '/gpu/metrics') {
        // A page of another kind on the same flag: a GPU exporter's (NVIDIA DCGM's field names), no engine counter.
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        return res.end('# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu="0"} 50\n');
      }
      if (url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ object: 'list', data: [{ id: 'test-model', object: 'model' }] }));
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not found"}');
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    replicas,
    routed,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
