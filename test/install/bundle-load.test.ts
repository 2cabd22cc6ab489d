// What the shipped bundle costs to load (issue 17, part 4): build-time changes in tools/bundle.mjs that a new
// dependency version or a comment could silently undo. The timing itself is measured in bench/startup.ts, not here.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';
import { RunAggregate } from '../../src/metrics/run-aggregate.js';
import { DIST_CLI, ensureDist } from '../helpers/dist.js';
import { syntheticRecords } from '../helpers/report-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

ensureDist();
const BUNDLE = dirname(DIST_CLI);
const work = tempDir('bundle-load');
after(() => rmSync(work, { recursive: true, force: true }));

test('every file of the bundle is pure ASCII, so V8 keeps each one as a one-byte string', () => {
  const offenders: string[] = [];
  for (const file of readdirSync(BUNDLE).filter((f) => f.endsWith('.js'))) {
    const bytes = readFileSync(join(BUNDLE, file));
    const at = bytes.findIndex((b) => b >= 0x80);
    if (at >= 0) offenders.push(`${file} (byte ${at}: ${JSON.stringify(bytes.subarray(Math.max(0, at - 30), at + 10).toString('utf8'))})`);
  }
  assert.deepEqual(offenders, []);
});

test("loading `run` (undici's client among it) loads neither node:http2 nor tls", async () => {
  // A preload that writes the built-in modules the process loaded when it exits.
  const preload = join(work, 'module-list.cjs');
  const list = join(work, 'modules.txt');
  writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`);
  // `run --help` registers the run command, which loads its whole module graph, then prints its help and exits.
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', preload, DIST_CLI, 'run', '--help'], { stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  assert.equal(code, 0);
  const modules = readFileSync(list, 'utf8').split('\n');
  // The preload's check is live: undici's HTTP/1 half and Node's http are loaded.
  assert.ok(modules.includes('NativeModule http'), 'node:http is among the loaded modules');
  assert.deepEqual(
    modules.filter((m) => /^NativeModule (http2|tls|_tls_wrap|internal\/http2\/.*)$/.test(m)),
    [],
  );
});

test("the bundle's histograms hold no WebAssembly or pako, and encode and decode as the unbundled package does", async () => {
  // The chunk with hdr-histogram-js: its wasm module and pako are left out (hdrHistogramNoWasm in tools/bundle.mjs).
  const chunks = readdirSync(BUNDLE).filter((f) => f.endsWith('.js') && readFileSync(join(BUNDLE, f), 'utf8').includes('node_modules/hdr-histogram-js/dist/JsHistogram.js'));
  assert.equal(chunks.length, 1, `one chunk holds hdr-histogram-js: ${chunks.join(', ')}`);
  const chunk = readFileSync(join(BUNDLE, chunks[0]!), 'utf8');
  for (const left of ['node_modules/pako/', 'node_modules/@assemblyscript/loader/', 'hdr-histogram-js/dist/wasm/generated-wasm.js']) assert.ok(!chunk.includes(left), `${left} is not bundled`);

  // The compressed encoding (a RunAggregate's toJSON, as worker threads and results.json carry it) through the
  // bundle's RunAggregate, against tsc's build on node_modules' unpatched package: the same bytes, the same summary back.
  const bundled = (await import(pathToFileURL(join(BUNDLE, 'index.js')).href)) as { RunAggregate: typeof RunAggregate };
  const records = syntheticRecords({ conversations: 20, turns: 5 });
  const fromBundle = JSON.stringify(bundled.RunAggregate.fromRecords(records));
  const fromPackage = JSON.stringify(RunAggregate.fromRecords(records));
  assert.ok(fromBundle.includes('"hdr":"'), 'the serialized aggregate carries compressed histograms');
  assert.equal(fromBundle, fromPackage);
  assert.deepEqual(bundled.RunAggregate.fromJSON(JSON.parse(fromBundle)).summary(), RunAggregate.fromJSON(JSON.parse(fromPackage)).summary());
});
