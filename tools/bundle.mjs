// Bundles the CLI and the library into dist/bundle/ with esbuild (issue 17, part 4): `npm run build` runs it after
// tsc. Node spends most of chatload's start-up loading modules (~530 files for `--version` unbundled: resolving,
// reading and compiling each one), so the shipped program is a few larger files instead.
//
// - Code splitting keeps every `await import()` lazy: each command, the simulator, the report renderer, exceljs and
//   each tokenizer encoding is its own chunk, loaded only when a run needs it.
// - Entries and chunks share one flat folder, so a worker started with startModuleWorker(import.meta.url, NAME)
//   (src/util/module-worker.ts) finds `./NAME.js` beside whichever chunk calls it: each worker's entry is named
//   after its source file (src/load/workers/part-worker.ts, src/sim/worker.ts).
// - dist/bundle/ is two levels under the package root, like dist/<folder>/, so package.json lookups
//   (src/util/version.ts) work unchanged.
// - Dependencies are bundled in (so the installed package needs none), except EXTERNAL: loaded on demand from
//   node_modules and left out of the bundle. Their licences are gathered into THIRD-PARTY-LICENSES.txt.
// - tsc still writes dist/**/*.d.ts (the library's types) and dist/**/*.js (which some tests import directly).
//
//   node tools/bundle.mjs
import { build } from 'esbuild';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = join(root, 'dist', 'bundle');

/** Optional dependencies: loaded with `await import()` on first use, with a clear error when not installed. */
const EXTERNAL = ['@huggingface/hub'];

/**
 * archiver-utils (exceljs writes its workbooks through archiver) still calls the deprecated `new Buffer()`. Node
 * warns about that (DEP0005) only for code outside node_modules, which bundled code in a clone is: without this,
 * `-e/--excel-output` printed a DeprecationWarning. The three calls get their documented replacements; the build
 * fails if an archiver-utils has a `new Buffer(` they do not cover, so the patch cannot go stale silently.
 */
const archiverUtilsBuffers = {
  name: 'archiver-utils-buffers',
  setup(build) {
    build.onLoad({ filter: /[/\\]archiver-utils[/\\]index\.js$/ }, async (args) => {
      const replacements = [
        ['new Buffer(size)', 'Buffer.alloc(size)'],
        ['new Buffer(0)', 'Buffer.alloc(0)'],
        ['new Buffer(source)', 'Buffer.from(source)'],
      ];
      let text = readFileSync(args.path, 'utf8');
      // One copy (zip-stream's own, newer) has none of them: patch what is there, and nothing may be left.
      for (const [from, to] of replacements) text = text.replace(from, to);
      if (text.includes('new Buffer(')) throw new Error(`bundle: ${args.path} has a \`new Buffer(\` the patch does not cover: review it in tools/bundle.mjs`);
      return { contents: text, loader: 'js' };
    });
  },
};

/**
 * undici's Client requires its HTTP/2 half (client-h2.js) at load, and with it `node:http2`, which loads `tls` and
 * `crypto`: ~6 ms of compiling Node's built-ins at every `run` (issue 17), for a protocol chatload never asks for
 * (no `allowH2`; a server is spoken to in HTTP/1.1). The one call (`connectH2(client, socket)`, for a socket that
 * negotiated h2) now requires it when first called. Bundled CommonJS runs when first required, so http2 then loads
 * only if an HTTP/2 connection is ever made. The build fails if the line is not there, so the patch cannot go stale.
 */
const undiciLazyHttp2 = {
  name: 'undici-lazy-http2',
  setup(build) {
    build.onLoad({ filter: /[/\\]undici[/\\]lib[/\\]dispatcher[/\\]client\.js$/ }, async (args) => {
      const line = "const connectH2 = require('./client-h2.js')";
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(line)) throw new Error(`bundle: ${args.path} has no \`${line}\`: review undiciLazyHttp2 in tools/bundle.mjs`);
      return { contents: text.replace(line, "const connectH2 = (...args) => require('./client-h2.js')(...args)"), loader: 'js' };
    });
  },
};

/**
 * hdr-histogram-js (the run's histograms) requires its WebAssembly histograms (`dist/wasm/`: a 39 KB base64 module,
 * @assemblyscript/loader) and pako (125 KB) at load: ~190 KB that `run` compiled before its first request (issue 17)
 * and never ran. chatload builds JS histograms only (`useWebAssembly: false`, src/metrics/histogram.ts), and the
 * compressed encoding deflates with Node's zlib (JsHistogram.encoding.js takes `require("zlib")` first; pako is its
 * fallback for browsers). So the wasm module becomes one whose functions throw, and the encoding's pako is zlib. The
 * build fails if either file no longer reads as patched here, so the patch cannot go stale silently.
 */
const hdrHistogramNoWasm = {
  name: 'hdr-histogram-no-wasm',
  setup(build) {
    build.onLoad({ filter: /[/\\]hdr-histogram-js[/\\]dist[/\\]wasm[/\\]index\.js$/ }, async (args) => {
      const exportsLine = 'exports.WasmHistogram = exports.webAssemblyReady = exports.initWebAssemblySync = exports.initWebAssembly = exports.webAssemblyAvailable = void 0;';
      if (!readFileSync(args.path, 'utf8').includes(exportsLine)) throw new Error(`bundle: ${args.path} exports other names: review hdrHistogramNoWasm in tools/bundle.mjs`);
      const contents = [
        'const notBundled = () => { throw new Error("chatload: hdr-histogram-js WebAssembly histograms are not bundled (tools/bundle.mjs)"); };',
        'exports.webAssemblyAvailable = false;',
        'exports.webAssemblyReady = () => false;',
        'exports.initWebAssembly = async () => notBundled();',
        'exports.initWebAssemblySync = notBundled;',
        'exports.WasmHistogram = class WasmHistogram { static build() { notBundled(); } static decode() { notBundled(); } };',
      ].join('\n');
      return { contents, loader: 'js' };
    });
    build.onLoad({ filter: /[/\\]hdr-histogram-js[/\\]dist[/\\]JsHistogram\.encoding\.js$/ }, async (args) => {
      const line = 'const pako = require("pako");';
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(line) || !text.includes('eval(\'require("zlib").deflateSync\')')) throw new Error(`bundle: ${args.path} no longer requires pako as a fallback for zlib: review hdrHistogramNoWasm in tools/bundle.mjs`);
      return { contents: text.replace(line, 'const pako = { deflate: require("zlib").deflateSync, inflate: require("zlib").inflateSync };'), loader: 'js' };
    });
  },
};

/** esbuild's options for the package's bundle; bench/startup.ts bundles its own probes with them too. */
export const BUNDLE_OPTIONS = {
  absWorkingDir: root,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // jsonc-parser's "main" is a UMD build whose require() calls esbuild cannot follow; its "module" build is plain ESM.
  mainFields: ['module', 'main'],
  chunkNames: 'chunk-[hash]',
  external: EXTERNAL,
  // Bundled CommonJS packages call require() for Node's built-ins; an ES module has none, so each file makes one.
  banner: { js: "import { createRequire as __chatloadCreateRequire } from 'node:module'; const require = __chatloadCreateRequire(import.meta.url);" },
  legalComments: 'none',
  plugins: [archiverUtilsBuffers, undiciLazyHttp2, hdrHistogramNoWasm],
  sourcemap: false,
  metafile: true,
  logLevel: 'warning',
};

/**
 * Makes every output file pure ASCII. esbuild escapes non-ASCII characters in strings and identifiers, but keeps
 * comments and regular expression literals as written, and one `—` or `µ` in a comment (chatload's or a
 * dependency's) makes V8 hold and scan the whole file as a two-byte string: undici's and zod's chunks among them,
 * ~1.2 MB that `run` loads before its first request. Escaped (`\u2014`), a comment reads the same, and in a regular
 * expression (with or without the u flag) the escape matches the same character. Measured: `run`'s start-up 13 ms
 * less CPU (median of 11 paired rounds; issue 17).
 */
function escapeNonAscii(dir) {
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.js')) continue;
    const path = join(dir, file);
    const text = readFileSync(path, 'utf8');
    // One UTF-16 code unit at a time: a character beyond U+FFFF becomes its two surrogates' escapes.
    const ascii = text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    if (ascii !== text) writeFileSync(path, ascii);
  }
}

/** Writes dist/bundle/, its THIRD-PARTY-LICENSES.txt and dist/bundle-meta.json. */
async function bundle() {
  const started = performance.now();
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    ...BUNDLE_OPTIONS,
    entryPoints: {
      chatload: 'src/cli/entry.ts',
      index: 'src/index.ts',
      'part-worker': 'src/load/workers/part-worker.ts',
      worker: 'src/sim/worker.ts',
    },
    outdir,
  });
  escapeNonAscii(outdir);

  // The licence of every package bundled in, from the inputs esbuild read.
  const packages = new Map();
  for (const input of Object.keys(result.metafile.inputs)) {
    const match = /^(.*node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(input);
    if (match && !packages.has(match[2])) packages.set(match[2], join(root, match[1]));
  }
  const notices = [...packages].sort(([a], [b]) => a.localeCompare(b)).map(([name, dir]) => {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = file ? readFileSync(join(dir, file), 'utf8').trim() : `License: ${pkg.license ?? 'see the package'} (no licence file in the package)`;
    return `${name}@${pkg.version} (${pkg.license ?? 'unknown'})\n\n${text}\n`;
  });
  writeFileSync(
    join(outdir, 'THIRD-PARTY-LICENSES.txt'),
    `chatload's bundle (dist/bundle/) includes the following packages, under their own licences.\n\n${notices.join(`\n${'-'.repeat(78)}\n\n`)}`,
  );

  // What went into each file, for bench/startup.ts (beside the bundle, not in the package).
  writeFileSync(join(root, 'dist', 'bundle-meta.json'), JSON.stringify(result.metafile));

  const files = Object.keys(result.metafile.outputs);
  const bytes = Object.values(result.metafile.outputs).reduce((a, o) => a + o.bytes, 0);
  if (!existsSync(join(outdir, 'chatload.js'))) throw new Error('bundle: no dist/bundle/chatload.js');
  console.log(`bundle: ${files.length} files, ${(bytes / 1e6).toFixed(1)} MB, ${packages.size} packages, in ${((performance.now() - started) / 1000).toFixed(1)} s (dist/bundle/)`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundle();
