import { Worker } from 'node:worker_threads';

/*
 * JSON.parse of a large request body off the event loop (issue #14): parsing a 3 MB chat body took ~10 ms in one
 * piece, during which no other stream of the simulator moved. Bodies over WORKER_PARSE_BYTES are parsed in one worker
 * thread, started on first use and kept (held only while a parse is pending: an idle one never keeps the process
 * open); the parsed value comes back by
 * structured clone, which copies strings without parsing them again. The same V8 parses in both places, so a body's
 * value and a malformed body's error message are the same as inline.
 *
 * The worker's code is a few lines of plain JavaScript given as a string (`eval`), not a module of its own: it needs
 * nothing of chatload, and so it runs the same from the sources (tsx), dist/ and the bundle.
 */

/** Bodies larger than this (bytes) are parsed in the worker; smaller ones on the loop (well under a millisecond). */
export const WORKER_PARSE_BYTES = 1024 * 1024;

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, bytes }) => {
  let reply;
  try {
    reply = { id, value: JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) };
  } catch (error) {
    reply = { id, error: String(error && error.message) };
  }
  parentPort.postMessage(reply);
});
`;

interface Reply {
  id: number;
  value?: unknown;
  error?: string;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** The worker's JSON.parse failed: its message, as JSON.parse's SyntaxError gives it inline. */
export class JsonSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();

function failAll(error: Error): void {
  worker?.unref();
  worker = undefined;
  for (const p of pending.values()) p.reject(error);
  pending.clear();
}

function started(): Worker {
  if (worker !== undefined) return worker;
  // No inherited --import tsx (execArgv): the eval'd script is plain JavaScript, and loading tsx would slow its start.
  const w = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
  w.on('message', (reply: Reply) => {
    const p = pending.get(reply.id);
    if (p === undefined) return;
    pending.delete(reply.id);
    if (pending.size === 0) w.unref();
    if (reply.error !== undefined) p.reject(new JsonSyntaxError(reply.error));
    else p.resolve(reply.value);
  });
  w.on('error', (error) => failAll(new Error(`the JSON parsing worker thread failed: ${error.message}`)));
  w.on('exit', (code) => failAll(new Error(`the JSON parsing worker thread exited (code ${code})`)));
  // Held (ref) only while a parse is pending: an idle worker never keeps the process open.
  w.unref();
  worker = w;
  return w;
}

/**
 * The value of the UTF-8 JSON in `bytes`, parsed in the worker thread. `bytes` is handed over (transferred when it
 * owns its whole ArrayBuffer, copied otherwise): do not use it afterwards. Rejects with JsonSyntaxError on bad JSON.
 */
export function parseJsonInWorker(bytes: Uint8Array): Promise<unknown> {
  const w = started();
  const id = nextId++;
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  // new Uint8Array(view) copies (a Buffer's own slice() would share the memory, and the transfer would detach it).
  const sent = owned ? bytes : new Uint8Array(bytes);
  return new Promise((resolve, reject) => {
    if (pending.size === 0) w.ref();
    pending.set(id, { resolve, reject });
    w.postMessage({ id, bytes: sent }, [sent.buffer as ArrayBuffer]);
  });
}
