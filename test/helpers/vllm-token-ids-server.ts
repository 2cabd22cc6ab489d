// Engine behaviour: vLLM's `return_token_ids` on chat completions (v0.10.2+, vllm/entrypoints/openai/chat_completion/
// protocol.py and serving.py). With it a streamed answer's first chunk carries the prompt's ids as a top-level
// `prompt_token_ids`, every chunk's choice its generated ids as `token_ids` (a chunk is sent for ids even when it has no
// text), and a body answer both at once. Beside it, the vLLM prefix cache the ids name: one global cache of 16-token
// blocks, a hit capped one token short of the prompt, the prompt's blocks shared from its admission (vLLM caches a block
// as it allocates it) and the answer's once it ends, the last sampled token never computed
// (vllm/v1/core/kv_cache_manager.py). POST /tokenize (at the root) answers
// `{count, max_model_len, tokens}` for `messages` or `prompt`. The answers are generated as ids whose text encodes back
// to other ids (a word split in two), as a real model's sometimes do: only the returned ids name what the server cached.
// `ignoreTokenIds`: an older vLLM, which ignores the field (pydantic drops unknown fields with a warning).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { BlockHashChain } from '../../src/prefix-cache/block-hash.js';
import { defaultTokenCounter, encodePrompt, type ChatMessage } from '../../src/tokenizer/index.js';
import { sseEvent } from './scripted-server.js';

const BLOCK = 16;
const EOS = 7;
const encode = (text: string): number[] => defaultTokenCounter.tokenizer.encode(text);

export interface VllmTokenIdsServer {
  url: string;
  /** Calls by `METHOD /path`. */
  calls: Map<string, number>;
  close(): Promise<void>;
}

/** An answer of `words` words: its text, and ids that are not the text's encoding (the middle word split in two). */
function answer(words: number, salt: number): { text: string; ids: number[] } {
  const list = Array.from({ length: words }, (_, i) => `word${(i * 7 + salt * 13) % 97}x`);
  const ids: number[] = [];
  list.forEach((word, i) => {
    const piece = i === 0 ? word : ` ${word}`;
    if (i !== Math.floor(words / 2)) ids.push(...encode(piece));
    else ids.push(...encode(piece.slice(0, 3)), ...encode(piece.slice(3)));
  });
  return { text: list.join(' '), ids: [...ids, EOS] };
}

/** Starts the server on 127.0.0.1 (see the comment at the top). */
export async function startVllmTokenIdsServer(options: { ignoreTokenIds?: boolean; answerWords?: number } = {}): Promise<VllmTokenIdsServer> {
  const cached = new Set<number>();
  const calls = new Map<string, number>();
  let salt = 0;
  const hitOf = (ids: number[]): number => {
    const keys = new BlockHashChain(BLOCK).sync(ids, ids.length, 0);
    let hit = 0;
    while (hit < Math.floor((ids.length - 1) / BLOCK) && cached.has(keys[hit]!)) hit++;
    return hit * BLOCK;
  };
  const register = (ids: number[], computed: number): void => {
    for (const key of new BlockHashChain(BLOCK).sync(ids, computed, 0)) cached.add(key);
  };
  const chat = (body: Record<string, unknown>, res: ServerResponse): void => {
    const promptIds = encodePrompt(defaultTokenCounter, body.messages as ChatMessage[], body.tools as unknown[] | undefined);
    const hit = hitOf(promptIds);
    register(promptIds, promptIds.length);
    const out = answer(options.answerWords ?? 12, salt++);
    // The last sampled token (EOS) is never computed: the rest of the answer is cached after the prompt.
    register([...promptIds, ...out.ids], promptIds.length + out.ids.length - 1);
    const withIds = body.return_token_ids === true && options.ignoreTokenIds !== true;
    const usage = { prompt_tokens: promptIds.length, completion_tokens: out.ids.length, total_tokens: promptIds.length + out.ids.length, prompt_tokens_details: { cached_tokens: hit } };
    const base = { id: 'chatcmpl-v', object: 'chat.completion.chunk', created: 0, model: body.model };
    if (body.stream !== true) {
      const choice = { index: 0, message: { role: 'assistant', content: out.text }, finish_reason: 'stop', ...(withIds ? { token_ids: out.ids } : {}) };
      const text = JSON.stringify({ ...base, object: 'chat.completion', choices: [choice], usage, ...(withIds ? { prompt_token_ids: promptIds } : {}) });
      res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      return;
    }
    const ids = (list: number[]): object => (withIds ? { token_ids: list } : {});
    const events = [sseEvent({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, ...ids([]) }], ...(withIds ? { prompt_token_ids: promptIds } : {}) })];
    // One chunk for the text (its ids all but EOS), one with EOS alone and no text, then usage.
    events.push(sseEvent({ ...base, choices: [{ index: 0, delta: { content: out.text }, finish_reason: null, ...ids(out.ids.slice(0, -1)) }] }));
    events.push(sseEvent({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop', ...ids(out.ids.slice(-1)) }] }));
    events.push(sseEvent({ ...base, choices: [], usage }), sseEvent('[DONE]'));
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(events.join(''));
  };
  const tokenize = (body: Record<string, unknown>, res: ServerResponse): void => {
    const tokens = Array.isArray(body.messages) ? encodePrompt(defaultTokenCounter, body.messages as ChatMessage[], body.tools as unknown[] | undefined) : encode(String(body.prompt));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count: tokens.length, max_model_len: 32768, tokens, token_strs: null }));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const route = `${req.method} ${(req.url ?? '/').split('?')[0]}`;
      calls.set(route, (calls.get(route) ?? 0) + 1);
      const body = chunks.length === 0 ? {} : (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      if (route === 'POST /v1/chat/completions') chat(body, res);
      else if (route === 'POST /tokenize') tokenize(body, res);
      else if (route === 'GET /v1/models') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'org/tiny', object: 'model', owned_by: 'vllm', max_model_len: 32768 }] }));
      else if (route === 'GET /version') res.writeHead(200, { 'content-type': 'application/json' }).end('{"version":"0.11.0"}');
      else res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
