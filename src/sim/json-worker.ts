import { Worker } from 'node:worker_threads';

/*
 * JSON.parse of a large request body off the event loop (issue #14): parsing a 3 MB chat body took ~10 ms in one
 * piece, during which no other stream of the simulator moved. Bodies over WORKER_PARSE_BYTES are parsed in one worker
 * thread, started on first use and kept (held only while a parse is pending: an idle one never keeps the process
 * open); the parsed value comes back by structured clone, which copies strings without parsing them again. The same V8
 * parses in both places, so a body's value and a malformed body's error message are the same as inline.
 *
 * Its large strings do not come back inside the clone: the clone's deserialization on the loop made a 3 MB content
 * string in one piece (3-5 ms, a fresh allocation of that size). The worker takes each string over
 * LARGE_STRING_CHARS out of the value (null in its place), writes them as UTF-8 into one ArrayBuffer that is
 * transferred (not copied), and sends each one's path; large-strings.ts decodes them on the loop in slices.
 * A string that is not well-formed UTF-16 (a lone surrogate, which JSON's \ud800 escape can make) has no UTF-8 form:
 * it stays in the clone.
 *
 * The worker's code is a few lines of plain JavaScript given as a string (`eval`), not a module of its own: it needs
 * nothing of chatload, and so it runs the same from the sources (tsx), dist/ and the bundle.
 */

/** Bodies larger than this (bytes) are parsed in the worker; smaller ones on the loop (well under a millisecond). */
export const WORKER_PARSE_BYTES = 1024 * 1024;

/**
 * Strings longer than this (UTF-16 code units) come back from the worker as UTF-8 bytes, not in the clone. Small,
 * because many mid-sized strings cost the clone as much as one of their total size: a body of 300 tool results of
 * 10 kB held the loop ~4 ms in the clone's deserialization, as one 3 MB content did.
 */
export const LARGE_STRING_CHARS = 4 * 1024;

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const LARGE = ${LARGE_STRING_CHARS};

// The strings over LARGE in value, each replaced by null: [{ path, text }]. An explicit stack, as the value may be
// nested deeper than the call stack allows; each entry links to its parent, so a path is built only for a string found.
function takeLarge(holder) {
  const found = [];
  const stack = [{ node: holder, parent: null, key: null }];
  while (stack.length > 0) {
    const entry = stack.pop();
    const node = entry.node;
    const keys = Array.isArray(node) ? null : Object.keys(node);
    const n = keys === null ? node.length : keys.length;
    for (let i = 0; i < n; i++) {
      const key = keys === null ? i : keys[i];
      const v = node[key];
      if (typeof v === 'string') {
        if (v.length > LARGE && v.isWellFormed()) {
          const path = [key];
          for (let e = entry; e.parent !== null; e = e.parent) path.push(e.key);
          found.push({ path: path.reverse(), text: v });
          node[key] = null;
        }
      } else if (v !== null && typeof v === 'object') stack.push({ node: v, parent: entry, key });
    }
  }
  return found;
}

parentPort.on('message', ({ id, bytes }) => {
  let value;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message) });
    return;
  }
  // The value sits in a holder, so that a body that is one large string is taken out the same way (path: [0]).
  const holder = [value];
  const found = takeLarge(holder);
  if (found.length === 0) {
    parentPort.postMessage({ id, value });
    return;
  }
  let total = 0;
  for (const f of found) total += Buffer.byteLength(f.text, 'utf8');
  // Written over the body's own bytes, which are no longer needed, and sent back: no new buffer per request. A
  // string's UTF-8 is never longer than its JSON (an escape is longer than the character it stands for), unless the
  // body held invalid UTF-8 (each bad byte decodes as a 3-byte U+FFFD): then a new buffer.
  const utf8 = total <= bytes.buffer.byteLength ? new Uint8Array(bytes.buffer, 0, total) : new Uint8Array(total);
  const writer = Buffer.from(utf8.buffer, 0, total);
  const ends = [];
  let at = 0;
  for (const f of found) {
    at += writer.write(f.text, at, 'utf8');
    ends.push(at);
  }
  parentPort.postMessage({ id, value: holder[0], paths: found.map((f) => f.path.slice(1)), ends, chars: found.map((f) => f.text.length), utf8 }, [utf8.buffer]);
});
`;

interface Reply {
  id: number;
  value?: unknown;
  error?: string;
  /** The large strings taken out of `value`: each one's path, and where its bytes end in `utf8`. */
  paths?: (string | number)[][];
  ends?: number[];
  chars?: number[];
  utf8?: Uint8Array;
}

/** A string taken out of a parsed value (null in its place), as UTF-8. */
export interface LargeString {
  /** Keys and indices from the value's root to the string; [] for a value that is the string itself. */
  readonly path: readonly (string | number)[];
  readonly utf8: Uint8Array;
  /** Its length in UTF-16 code units: that of its bytes when it is ASCII. */
  readonly chars: number;
}

/** A body parsed in the worker: its value with its large strings taken out, and those strings. */
export interface WorkerParse {
  readonly value: unknown;
  readonly large: readonly LargeString[];
}

interface Pending {
  resolve: (parse: WorkerParse) => void;
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
    else p.resolve({ value: reply.value, large: largeStrings(reply) });
  });
  w.on('error', (error) => failAll(new Error(`the JSON parsing worker thread failed: ${error.message}`)));
  w.on('exit', (code) => failAll(new Error(`the JSON parsing worker thread exited (code ${code})`)));
  // Held (ref) only while a parse is pending: an idle worker never keeps the process open.
  w.unref();
  worker = w;
  return w;
}

function largeStrings(reply: Reply): LargeString[] {
  if (reply.paths === undefined) return [];
  let start = 0;
  return reply.paths.map((path, i) => {
    const end = reply.ends![i]!;
    const utf8 = reply.utf8!.subarray(start, end);
    start = end;
    return { path, utf8, chars: reply.chars![i]! };
  });
}

/**
 * The value of the UTF-8 JSON in `bytes`, parsed in the worker thread, with its strings over LARGE_STRING_CHARS taken
 * out as UTF-8 (placeLargeStrings in large-strings.ts puts them back). `bytes` is handed over (transferred when it
 * owns its whole ArrayBuffer, copied otherwise): do not use it afterwards. Rejects with JsonSyntaxError on bad JSON.
 */
export function parseJsonInWorker(bytes: Uint8Array): Promise<WorkerParse> {
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
