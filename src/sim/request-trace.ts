import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { ChatloadError } from '../errors/index.js';

/** One line of `--trace FILE`: a request as the simulator saw it. Times are server-side epoch ms (fractional). */
export interface TraceLine {
  id: string;
  arrival_ms: number;
  /** When the first token chunk was written to the socket; null if none was. */
  first_token_ms: number | null;
  /** Token chunks written to the socket. */
  tokens_written: number;
  end_ms: number;
  prompt_tokens: number;
  cached_tokens: number;
  /** HTTP status sent (0 if the socket was destroyed before any header). */
  status: number;
  /** ok, client_closed, rejected, or fault:<kind>. */
  outcome: string;
  /** The request's X-Session-ID header (chatload sends it with --send-conversation-id), to match client records. */
  session_id?: string | null;
  /** The replica that served it (0-based, `x-chatload-replica`); null when the router refused it before picking one. */
  replica?: number | null;
}

const FLUSH_BYTES = 64 * 1024;
const FLUSH_MS = 200;

/** Appends trace lines to a file through a buffer: flushed at 64 KiB, every 200 ms, and on close. */
export class TraceWriter {
  readonly path: string;
  readonly #stream: WriteStream;
  #buffer = '';
  #timer: NodeJS.Timeout | null = null;
  #error: Error | null = null;

  constructor(path: string) {
    this.path = path;
    this.#stream = createWriteStream(path, { flags: 'w' });
    this.#stream.on('error', (error) => {
      this.#error = error;
    });
  }

  /** Waits until the file is open; rejects with a ChatloadError naming the file if it cannot be. */
  async ready(): Promise<void> {
    if (this.#error !== null) throw this.#wrap(this.#error);
    try {
      await Promise.race([once(this.#stream, 'ready'), once(this.#stream, 'error').then(([e]) => Promise.reject(e as Error))]);
    } catch (error) {
      throw this.#wrap(error as Error);
    }
  }

  /** Buffers one line. */
  write(line: TraceLine): void {
    if (this.#error !== null) return;
    this.#buffer += JSON.stringify(line) + '\n';
    if (this.#buffer.length >= FLUSH_BYTES) this.#flush();
    else if (this.#timer === null) {
      this.#timer = setTimeout(() => this.#flush(), FLUSH_MS);
      this.#timer.unref();
    }
  }

  /** Flushes and closes the file. */
  async close(): Promise<void> {
    this.#flush();
    if (this.#stream.closed || this.#error !== null) return;
    this.#stream.end();
    await once(this.#stream, 'close').catch(() => undefined);
  }

  #flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#buffer === '' || this.#error !== null) return;
    this.#stream.write(this.#buffer);
    this.#buffer = '';
  }

  #wrap(error: Error): ChatloadError {
    return new ChatloadError(`cannot write the simulator trace ${this.path}: ${error.message}`, { cause: error });
  }
}
