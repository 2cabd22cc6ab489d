// The README's library snippet, as a user pastes it (issue #34, item 7): run as written, twice in the same folder,
// against the package `import 'chatload'` resolves to (this checkout, linked as node_modules/chatload: its
// package.json "exports", the bundle). The second run finds the first one's output folder.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ensureDist } from '../helpers/dist.js';
import { REPO_ROOT } from '../helpers/repo.js';
import { tempDir } from '../helpers/tmp.js';

ensureDist();
const work = tempDir('readme-library');
after(() => rmSync(work, { recursive: true, force: true }));

/** The first ```ts block under the README's "## Library". */
function librarySnippet(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Library\n'));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block !== undefined && block.includes("from 'chatload'"), "the README's Library section has a ts block importing chatload");
  return block;
}

function runNode(script: string, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test("the README's library snippet runs twice in the same folder", { timeout: 240_000 }, async () => {
  mkdirSync(join(work, 'node_modules'));
  symlinkSync(REPO_ROOT, join(work, 'node_modules', 'chatload'));
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'try-the-readme', private: true, type: 'module' }));
  const script = join(work, 'snippet.mjs');
  writeFileSync(script, librarySnippet());
  for (const round of [1, 2]) {
    const ran = await runNode(script, work);
    assert.equal(ran.code, 0, `round ${round}: ${ran.stderr}`);
    // It prints the TTFT p50 and the conversation counts.
    assert.match(ran.stdout, /^\d+(\.\d+)? \{[^]*completed: \d+/, `round ${round}: ${ran.stdout}`);
    const results = JSON.parse(readFileSync(join(work, 'out', 'results.json'), 'utf8')) as { summary: { completed: number } };
    assert.equal(results.summary.completed, 100, `round ${round}: the run's 100 requests completed`);
  }
  assert.ok(existsSync(join(work, 'out', 'requests.jsonl')));
});
