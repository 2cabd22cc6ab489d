// Engine quirk: llama.cpp's llama-server (cpp-httplib) answers a *streamed* chat completion with
// `Keep-Alive: timeout=5, max=100` and no `Connection: close`, then closes the socket 0.1-0.8 ms after the last chunk
// (measured against a live llama-server, issue #12). A client that reuses the connection at once writes its next
// request onto a socket the server is closing: the server never reads it and the client sees "other side closed".
// Non-streamed replies keep the connection open. This raw `net` server reproduces that byte for byte.
import type { Socket } from 'node:net';
import { modelsResponse, startRawServer, type RawServer } from './raw-server.js';

/** Options of {@link startCloseAfterStreamServer}. */
export interface CloseAfterStreamOptions {
  /**
   * Delay (ms) between the last chunk and the FIN. llama-server's is 0.1-0.8 ms; Node's timers round it up to ~1 ms.
   * A longer delay makes the race certain: the client's next request always arrives before the FIN.
   */
  finDelayMs?: number;
  /** Answer chunks per reply (tokens). */
  tokens?: number;
  /** Keep every connection open instead (a well-behaved server, the baseline of bench/stale-connections.ts). */
  keepAlive?: boolean;
}

/** The raw server, plus how many chat requests arrived on a socket the server had decided to close. */
export interface CloseAfterStreamServer extends RawServer {
  /** Chat requests written onto a closing socket and dropped unanswered (what the client must resend). */
  readonly dropped: number;
}

const chunk = (text: string): string => {
  const payload = `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
  return `${Buffer.byteLength(payload).toString(16)}\r\n${payload}\r\n`;
};

/** Starts the llama-server-like raw server on 127.0.0.1:0 (model `raw-model`). */
export async function startCloseAfterStreamServer(options: CloseAfterStreamOptions = {}): Promise<CloseAfterStreamServer> {
  const closing = new WeakSet<Socket>();
  let dropped = 0;
  const tokens = options.tokens ?? 4;
  const server = await startRawServer((request, socket, later) => {
    if (request.method === 'GET') {
      socket.write(modelsResponse());
      return;
    }
    if (closing.has(socket)) {
      // cpp-httplib has left its keep-alive loop for this socket: the request is never read or answered.
      dropped += 1;
      return;
    }
    const stream = JSON.parse(request.body).stream !== false;
    if (!stream) {
      const body = JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok '.repeat(tokens).trim() }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: tokens, total_tokens: 10 + tokens },
      });
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      return;
    }
    let out = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nKeep-Alive: timeout=5, max=100\r\nTransfer-Encoding: chunked\r\n\r\n';
    for (let i = 0; i < tokens; i++) out += chunk(i === 0 ? 'ok' : ' ok');
    const usage = { id: 'x', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 10, completion_tokens: tokens, total_tokens: 10 + tokens } };
    const tail = `data: ${JSON.stringify(usage)}\n\ndata: [DONE]\n\n`;
    out += `${Buffer.byteLength(tail).toString(16)}\r\n${tail}\r\n0\r\n\r\n`;
    socket.write(out);
    if (options.keepAlive) return;
    closing.add(socket);
    later(options.finDelayMs ?? 0.3, () => socket.end());
  });
  // A getter (Object.assign would copy today's value): `dropped` is read after the run.
  return Object.defineProperty(server, 'dropped', { get: () => dropped, enumerable: true }) as CloseAfterStreamServer;
}
