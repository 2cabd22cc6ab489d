import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadDataset, type LoadOptions } from '../../src/conversation/load.js';
import { ConfigError, DatasetError } from '../../src/errors/index.js';

let fileCounter = 0;

/**
 * Writes `content` into `dir` as a file ending in `extension` and loads it: 'ok' when it gives conversations (each
 * with a string id), else the one-line input error, which must name the file and exit 2. Anything else (another
 * exception, a message over two lines) fails the calling test: what the loader fuzz tests assert.
 */
export async function loadOrOneLineError(dir: string, content: string | Uint8Array, extension: string, options: LoadOptions = {}): Promise<string> {
  const path = join(dir, `f${fileCounter++}${extension}`);
  writeFileSync(path, content);
  try {
    const { conversations } = await loadDataset(path, options);
    assert.ok(Array.isArray(conversations) && conversations.length > 0, 'a successful load has conversations');
    for (const c of conversations) assert.equal(typeof c.id, 'string');
    return 'ok';
  } catch (error) {
    assert.ok(error instanceof DatasetError || error instanceof ConfigError, `unexpected ${(error as Error)?.stack ?? String(error)}`);
    assert.ok(!/[\r\n]/.test(error.message), `one line: ${JSON.stringify(error.message)}`);
    assert.ok(error.message.startsWith(path), `names the file: ${error.message}`);
    assert.equal(error.exitCode, 2);
    return error.message;
  }
}
