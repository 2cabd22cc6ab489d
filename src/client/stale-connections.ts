// Which failed requests died on a *reused* keep-alive connection before any byte of their response arrived.
//
// Why: llama.cpp's llama-server (cpp-httplib) answers a streamed reply with `Keep-Alive: timeout=5, max=100` and no
// `Connection: close`, then closes the socket 0.1-0.8 ms after the last chunk (issue #12). A client that sends its next
// request at once writes it onto that closing socket, and undici fails it with "other side closed" / ECONNRESET /
// EPIPE. Such a request never reached the server's handler, so it is resent on a fresh connection rather than
// counted as a failure (Go's net/http does the same for a reused connection). undici 7 does not say whether a
// request went out on a reused socket, but its documented diagnostics channels do: `undici:client:sendHeaders`
// names the socket each request is written to, `undici:request:trailers` marks a response complete, and
// `undici:request:error` hands over the very error object the request promise rejects with.
import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

/** What is known of a request that failed on a reused connection before any response byte. */
export interface StaleConnectionFailure {
  /** How long the connection had been idle (ms) between its previous response's end and this request's send. */
  idleMs: number;
}

interface SocketUse {
  /** Requests written to the socket so far. */
  requests: number;
  /** performance.now() when its last response completed; NaN while none has. */
  lastDoneAtMs: number;
}

interface RequestSend {
  socket: Socket;
  /** The socket carried an earlier request. */
  reused: boolean;
  /** socket.bytesRead when this request was written: unchanged at the failure means no response byte came. */
  bytesReadAtSend: number;
  idleMs: number;
}

// All keyed weakly by undici's own objects: nothing here outlives a socket, a request or an error.
const socketUse = new WeakMap<Socket, SocketUse>();
const requestSends = new WeakMap<object, RequestSend>();
const staleFailures = new WeakMap<object, StaleConnectionFailure>();
let subscribed = false;

interface SendHeadersMessage {
  request: object;
  socket: Socket;
}
interface RequestMessage {
  request: object;
  error?: unknown;
}

function onSendHeaders(message: unknown): void {
  const { request, socket } = message as SendHeadersMessage;
  let use = socketUse.get(socket);
  if (use === undefined) {
    use = { requests: 0, lastDoneAtMs: Number.NaN };
    socketUse.set(socket, use);
  }
  const reused = use.requests > 0;
  use.requests += 1;
  requestSends.set(request, {
    socket,
    reused,
    bytesReadAtSend: socket.bytesRead,
    idleMs: reused && !Number.isNaN(use.lastDoneAtMs) ? performance.now() - use.lastDoneAtMs : 0,
  });
}

function onTrailers(message: unknown): void {
  const send = requestSends.get((message as RequestMessage).request);
  const use = send === undefined ? undefined : socketUse.get(send.socket);
  if (use !== undefined) use.lastDoneAtMs = performance.now();
}

function onRequestError(message: unknown): void {
  const { request, error } = message as RequestMessage;
  const send = requestSends.get(request);
  if (send === undefined || !send.reused || typeof error !== 'object' || error === null) return;
  if (send.socket.bytesRead !== send.bytesReadAtSend) return;
  staleFailures.set(error, { idleMs: send.idleMs });
}

/** Starts watching undici's diagnostics channels (once per thread; idempotent). Costs three calls per request. */
export function watchConnectionReuse(): void {
  if (subscribed) return;
  subscribed = true;
  subscribe('undici:client:sendHeaders', onSendHeaders);
  subscribe('undici:request:trailers', onTrailers);
  subscribe('undici:request:error', onRequestError);
}

/**
 * The stale-connection facts of `error`, when it is the error an undici request rejected with after being written
 * to a reused connection and before any byte of its response arrived; undefined otherwise (a fresh connection's
 * failure, a failure after response bytes, or an error undici did not report).
 */
export function staleConnectionFailure(error: unknown): StaleConnectionFailure | undefined {
  return typeof error === 'object' && error !== null ? staleFailures.get(error) : undefined;
}
