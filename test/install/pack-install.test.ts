// Install anywhere (issue 18, part 3): the package as a user gets it. NETWORK: this file installs from the npm
// registry (the tarball's optional dependency, @huggingface/hub), as CI can; every step is bounded and the temp
// folders are removed. The tarball is what `npm pack` makes, its "prepack" and "postpack" included (the build, then
// tools/pack-manifest.mjs), run in a copy of the checkout: the prepack's build there leaves alone the dist/ that the
// other test files beside this one run. npm test's --test-timeout (420 s) is as long as this file's describe: at
// 120 s the whole file was cut on a loaded machine (three other test runs beside it), while each step is bounded below.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ensureDist } from '../helpers/dist.js';
import { REPO_ROOT } from '../helpers/repo.js';
import { tempDir } from '../helpers/tmp.js';

const ROOT = REPO_ROOT;
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; scripts: Record<string, string> };
/** The installed size limit with default features (issue 18). */
const MAX_INSTALLED_BYTES = 40 * 1024 * 1024;
/** The lifecycle scripts npm runs (and warns about) when it installs a package. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];
/** What the README's Install section says the install weighs, in MB: `~N MB installed`. */
const README_MB = Number(/~(\d+) MB installed/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))?.[1]);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command with no TTY, killed after `timeoutMs`. */
function run(command: string, args: readonly string[], options: { cwd: string; timeoutMs: number; env?: NodeJS.ProcessEnv }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, NO_COLOR: '1', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The bytes under `path` as `du --apparent-size --bytes` counts them: files, folders and links themselves. */
function bytesUnder(path: string): number {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  let total = stat.size;
  for (const entry of readdirSync(path)) total += bytesUnder(join(path, entry));
  return total;
}

/**
 * A copy of the checkout as a clone has it after `npm ci`: what `npm pack` reads and what its prepack builds from,
 * with the built dist/ (tsc's incremental state included, so the prepack's tsc has little to do) and node_modules
 * linked, not copied.
 */
function copyOfCheckout(to: string): string {
  ensureDist();
  mkdirSync(to, { recursive: true });
  for (const entry of ['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'docs', 'schema', 'src', 'tools', 'dist']) {
    cpSync(join(ROOT, entry), join(to, entry), { recursive: true });
  }
  rmSync(join(to, 'dist', '.build-lock'), { recursive: true, force: true });
  symlinkSync(join(ROOT, 'node_modules'), join(to, 'node_modules'));
  return to;
}

const work = tempDir('pack-install');
after(() => rmSync(work, { recursive: true, force: true }));

describe('the packed tarball, installed into an empty folder with --omit=dev', { timeout: 420_000 }, () => {
  const app = join(work, 'app');
  let tarball = '';

  test('npm pack ships the prebuilt bundle, the types, the LICENSE, no sources and no install script', { timeout: 150_000 }, async () => {
    assert.match(PKG.scripts.prepack ?? '', /^npm run build && /, 'the package is built before it is packed');
    const checkout = copyOfCheckout(join(work, 'checkout'));
    const before = readFileSync(join(checkout, 'package.json'), 'utf8');
    const packed = await run('npm', ['pack', '--json', '--loglevel=warn', '--pack-destination', work], { cwd: checkout, timeoutMs: 140_000 });
    assert.equal(packed.code, 0, packed.stderr);
    assert.equal(readFileSync(join(checkout, 'package.json'), 'utf8'), before, "postpack put the checkout's package.json back, byte for byte");
    assert.ok(!existsSync(join(checkout, 'package.json.unpacked')));
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = join(work, info!.filename);
    const files = info!.files.map((f) => f.path);
    for (const wanted of ['LICENSE', 'README.md', 'bin/chatload.js', 'dist/bundle/chatload.js', 'dist/bundle/index.js', 'dist/bundle/part-worker.js', 'dist/bundle/worker.js', 'dist/bundle/THIRD-PARTY-LICENSES.txt', 'dist/index.d.ts', 'schema/results.schema.json', 'schema/record.schema.json']) {
      assert.ok(files.includes(wanted), `${wanted} is in the tarball`);
    }
    assert.deepEqual(files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('dist-test/') || f.startsWith('tools/') || /^dist\/(?!bundle\/).*\.js$/.test(f)), [], 'no sources, tests, tools or unbundled JS');
    const shipped = await run('tar', ['-xzOf', tarball, 'package/package.json'], { cwd: work, timeoutMs: 30_000 });
    const scripts = (JSON.parse(shipped.stdout) as { scripts?: Record<string, string> }).scripts ?? {};
    assert.deepEqual(INSTALL_SCRIPTS.filter((name) => name in scripts), [], 'the packed package.json declares no install script');
    assert.ok('prepare' in PKG.scripts, "the checkout's package.json keeps prepare: a clone's npm ci builds dist/");
  });

  test('npm install --omit=dev: no warning, no build step, the size the README says, under 40 MB', { timeout: 240_000 }, async () => {
    assert.ok(tarball, 'packed');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'try-chatload', private: true, type: 'module' }));
    // --loglevel=warn: warnings shown whatever the npm that runs the tests was given, notices (an update check) not.
    const installed = await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', '--loglevel=warn', tarball], { cwd: app, timeoutMs: 230_000 });
    assert.equal(installed.code, 0, installed.stderr);
    assert.doesNotMatch(installed.stderr, /warn/i, 'npm printed no warning');
    const size = bytesUnder(join(app, 'node_modules'));
    // The figure for the README's Install section and docs/PERFORMANCE.md ("Installed size"): du -sh --apparent-size.
    console.log(`installed node_modules: ${(size / 1e6).toFixed(1)} MB (chatload ${(bytesUnder(join(app, 'node_modules', 'chatload')) / 1e6).toFixed(1)} MB)`);
    assert.ok(size < MAX_INSTALLED_BYTES, `installed size ${size} bytes is under 40 MB`);
    assert.ok(Math.abs(size / 1e6 - README_MB) <= 1, `the README says ~${README_MB} MB installed; measured ${(size / 1e6).toFixed(1)} MB`);
  });

  test('chatload --version, and a short run against the embedded simulator', { timeout: 120_000 }, async () => {
    const bin = join(app, 'node_modules', '.bin', 'chatload');
    assert.ok(existsSync(bin), 'npm linked the chatload command');
    const version = await run(bin, ['--version'], { cwd: app, timeoutMs: 30_000 });
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout.trim(), PKG.version);

    const out = join(app, 'out');
    const ran = await run(bin, ['run', '-n', '12', '-p', '3', '-q', '--output-dir', out], { cwd: app, timeoutMs: 100_000 });
    assert.equal(ran.code, 0, ran.stderr);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { completed: number; failed: number };
    assert.equal(results.completed, 12);
    assert.equal(results.failed, 0);
    assert.ok(existsSync(join(out, 'report.html')));
    // The published schema, read from the installed package (issue #32).
    const schema = await run(bin, ['schema', 'results'], { cwd: app, timeoutMs: 30_000 });
    assert.equal(schema.code, 0, schema.stderr);
    assert.equal(schema.stdout, readFileSync(join(ROOT, 'schema', 'results.schema.json'), 'utf8'));
  });

  test('without the optional @huggingface/hub (as --omit=optional installs), a Hub tokenizer is one line saying what to install', { timeout: 60_000 }, async () => {
    // The package is moved aside for this test only (the tests of this file run one after another). A revision given
    // as a commit needs no request to the Hub before the download would load the package; HF_ENDPOINT is a closed
    // loopback port all the same.
    const hub = join(app, 'node_modules', '@huggingface', 'hub');
    const aside = `${hub}.aside`;
    const present = existsSync(hub);
    if (present) renameSync(hub, aside);
    try {
      const bin = join(app, 'node_modules', '.bin', 'chatload');
      const env = { HF_HOME: tempDir('hubless-home'), HF_ENDPOINT: 'http://127.0.0.1:9' };
      const ran = await run(bin, ['run', '--tokenizer', `some-org/some-model@${'0'.repeat(40)}`, '-n', '1', '--output-dir', join(app, 'hubless')], { cwd: app, timeoutMs: 50_000, env });
      assert.equal(ran.code, 2, ran.stderr);
      assert.equal(ran.stdout, '');
      assert.match(ran.stderr, /^chatload: --tokenizer some-org\/some-model: downloading it from the Hugging Face Hub needs the optional package @huggingface\/hub, which is not installed \(npm install @huggingface\/hub beside chatload, .*\)\n$/);
    } finally {
      if (present) renameSync(aside, hub);
    }
  });

  test('the library API from the installed package', { timeout: 60_000 }, async () => {
    const script = join(app, 'use.mjs');
    writeFileSync(
      script,
      "import { startSimulator, runBenchmark, RunAggregate } from 'chatload';\n" +
        "const sim = await startSimulator({ profile: 'cpu-tiny' });\n" +
        "try { const r = await runBenchmark({ url: sim.url, numClients: 2, maxNumRequests: 4, outputDir: 'lib-out' }); console.log(JSON.stringify({ completed: r.summary.completed, agg: typeof RunAggregate })); } finally { await sim.close(); }\n",
    );
    const ran = await run(process.execPath, [script], { cwd: app, timeoutMs: 50_000 });
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(JSON.parse(ran.stdout.trim().split('\n').at(-1)!), { completed: 4, agg: 'function' });
  });

  test("a TypeScript consumer gets runBenchmark's options typed, with no zod installed", { timeout: 60_000 }, async () => {
    // The installed package has no dependencies (zod is bundled), so its .d.ts must spell RunOptionsInput out: typed
    // through z.input, the options were `any` here and a wrong option type-checked. This project's tsc and @types/node
    // stand in for the consumer's own.
    const types = join(app, 'types-check');
    mkdirSync(types, { recursive: true });
    writeFileSync(join(types, 'package.json'), '{ "type": "module" }');
    writeFileSync(join(types, 'good.ts'), "import { runBenchmark } from 'chatload';\nconst r = await runBenchmark({ numClients: 2, maxNumRequests: 4, endpoint: 'chat' });\nconst p50: number | undefined = r.summary.metrics.ttft_ms?.p50;\nconsole.log(p50);\n");
    writeFileSync(join(types, 'bad.ts'), "import { runBenchmark } from 'chatload';\nawait runBenchmark({ numClients: 'four' });\nawait runBenchmark({ noSuchOption: true });\n");
    const tsconfig = (file: string): string => {
      const path = join(types, `tsconfig.${file}.json`);
      const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')] };
      writeFileSync(path, JSON.stringify({ compilerOptions, files: [`${file}.ts`] }));
      return path;
    };
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const good = await run(process.execPath, [tsc, '-p', tsconfig('good')], { cwd: types, timeoutMs: 50_000 });
    assert.equal(good.code, 0, good.stdout + good.stderr);
    const bad = await run(process.execPath, [tsc, '-p', tsconfig('bad')], { cwd: types, timeoutMs: 50_000 });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stdout, /bad\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
    assert.match(bad.stdout, /bad\.ts\(3,\d+\): error TS2353: .*'noSuchOption' does not exist/);
  });
});

describe('prepare without the dev dependencies (npm ci --omit=dev in a clone)', () => {
  // tools/prepare.mjs in a folder with no node_modules above it: typescript and esbuild cannot be found.
  const clone = join(work, 'clone');
  mkdirSync(join(clone, 'tools'), { recursive: true });
  copyFileSync(join(ROOT, 'tools', 'prepare.mjs'), join(clone, 'tools', 'prepare.mjs'));

  test('with no dist/: exits 1 and says what to do (never a bare exit 127)', async () => {
    const ran = await run(process.execPath, ['tools/prepare.mjs'], { cwd: clone, timeoutMs: 30_000, env: { npm_command: 'ci' } });
    assert.equal(ran.code, 1);
    assert.match(ran.stderr, /^chatload: cannot build dist\/: the build needs the dev dependencies \(typescript, esbuild\).*npm ci.*npm pack/);
  });

  test('with a built dist/: skips the build with a clear message', async () => {
    mkdirSync(join(clone, 'dist', 'bundle'), { recursive: true });
    writeFileSync(join(clone, 'dist', 'bundle', 'chatload.js'), '');
    const ran = await run(process.execPath, ['tools/prepare.mjs'], { cwd: clone, timeoutMs: 30_000, env: { npm_command: 'ci' } });
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stderr, /^chatload: not rebuilding dist\/: the dev dependencies \(typescript, esbuild\) are not installed/);
  });
});
