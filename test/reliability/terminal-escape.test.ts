// Nothing from a server or a dataset reaches a terminal unescaped (issue #35, item 13): a server whose errors carry
// escape sequences (a window title, a screen clear, a colour), a BEL and a NUL, and a dataset whose messages carry
// them too, with -v and --print-content, and with -q: stdout and stderr hold none of those characters, only their
// `\xNN` forms.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { MODELS_RESPONSE, SHORT_ANSWER, sseEvent, startScriptedServer, type ScriptedResponse } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

const HOSTILE = '\u001b]0;pwned\u0007\u001b[2J\u001b[31mRED\u0000NUL\r';

test('server and dataset text is escaped on the terminal: -v, --print-content, warnings, the failure summary, -q', { timeout: 60_000 }, async () => {
  let chats = 0;
  const server = await startScriptedServer((request) => {
    if (request.method === 'GET') return MODELS_RESPONSE;
    chats += 1;
    if (chats % 3 === 1) {
      const body: ScriptedResponse = { status: 500, headers: { 'content-type': 'text/plain' }, actions: [{ write: `overloaded ${HOSTILE}` }, { end: true }] };
      return body;
    }
    if (chats % 3 === 2) return { actions: [{ write: sseEvent({ error: { message: `bad ${HOSTILE}` } }) }, { end: true }] };
    return SHORT_ANSWER;
  });
  const dir = tempDir('terminal-escape');
  try {
    const input = join(dir, 'in.json');
    const conversations = [0, 1, 2].map((i) => ({ id: `c${i}`, messages: [{ role: 'user', content: `hello ${HOSTILE} ${i}` }, { role: 'assistant', content: 'ok' }] }));
    writeFileSync(input, JSON.stringify(conversations));
    for (const flags of [['-v', '--print-content'], ['-q']]) {
      const result = await runCli(['run', '-u', server.url, '-i', input, '-p', '1', '--max-retries', '0', '--max-error-rate', '0', '--no-early-stop', '--output-dir', join(dir, flags.join('')), ...flags]);
      assert.equal(result.code, 1, 'the run failed over --max-error-rate: its failure lines quote the server');
      const out = result.stdout + result.stderr;
      // eslint-disable-next-line no-control-regex -- control characters are what it looks for
      assert.doesNotMatch(out, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, `a control character reached the terminal: ${JSON.stringify(out)}`);
      assert.match(out, /\\x1b\]0;pwned\\x07/, 'the server\'s text is shown, escaped');
      if (flags.includes('--print-content')) assert.match(out, /hello \\x1b/, 'the dataset\'s text is shown, escaped');
    }
  } finally {
    await server.close();
  }
});
