// The shape of src/ (issue 17): no import cycle between files, and imports between folders run one way, down the
// layers below. Imports are read with TypeScript's parser: static, `export ... from`, dynamic `import()` and
// type-only imports (`import type`, `import('x').T`) all count, since each ties one file to another.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';
import { repoPath } from '../helpers/repo.js';

/** One folder of src/ (or the top-level `index.ts`) and what it may import besides itself. */
interface Layer {
  folder: string;
  /** What the folder is, and so why it sits where it does. */
  why: string;
  /** Folders it may import anything from. Each must come before it in LAYERS. */
  may: readonly string[];
  /** Folders it may import types from only (`import type` / `export type`). Each must come before it in LAYERS. */
  types?: readonly string[];
  /** Exceptions: folders after it in LAYERS that it still imports, each with the reason it is tolerated. */
  upward?: Readonly<Record<string, string>>;
}

/**
 * src/'s folders from the bottom up. The rule: cli -> benchmark -> load -> client and metrics -> util (and errors),
 * with no import running back up. A folder lists only folders before it, so any import it makes points down.
 */
const LAYERS: readonly Layer[] = [
  { folder: 'errors', why: 'the error hierarchy and exit codes: the bottom', may: [] },
  { folder: 'util', why: "helpers that know no part: UTF-8 text reading, module workers, the version, redactText, undici's Agent and request, counted nouns, the seeded Rng, letting the event loop go between slices (loop-turns)", may: ['errors'] },
  {
    folder: 'prefix-cache',
    why: "a prefix cache's block-hash chain and LRU block pool over generic keys: shared by the simulator, the expected-cache model and trace stats",
    may: [],
  },
  { folder: 'options', why: 'the option table and the RunPlan: it describes the parts, so it imports none of them (util: helpers that know no part)', may: ['errors', 'util'] },
  { folder: 'tokenizer', why: 'tokenizers and chat templates', may: ['errors', 'util'] },
  { folder: 'client', why: 'HTTP + SSE, error kinds: knows no load, no metrics, no files; messages in their wire shape (tokenizer/chat-message)', may: ['errors', 'tokenizer', 'util'] },
  { folder: 'server-engine', why: 'which engine serves a URL, from a few GETs', may: ['util'] },
  { folder: 'metrics', why: "numbers derived from records; reads the client's StreamResult and ErrorKind as types", may: ['options'], types: ['client'] },
  { folder: 'live-metrics', why: "a run's live Prometheus metrics (--metrics-port): prom-client fed by the run's records, served on 127.0.0.1", may: ['errors'], types: ['metrics'] },
  {
    folder: 'conversation',
    why: 'the Conversation model, loading and validating datasets',
    may: ['errors', 'tokenizer', 'util'],
    upward: {
      synth: 'loadDataset generates a generate_conversations config, and synth builds Conversations, so it sits above; no file cycle',
    },
  },
  { folder: 'synth', why: 'seeded RNG, distributions, the conversation generator', may: ['conversation', 'errors', 'metrics', 'options', 'prefix-cache', 'tokenizer', 'util'] },
  { folder: 'sim', why: 'the simulated server: never the load, client or benchmark that test against it', may: ['errors', 'options', 'prefix-cache', 'synth', 'tokenizer', 'util'] },
  { folder: 'server-metrics', why: "scraping a server's /metrics", may: ['client', 'server-engine', 'util'], types: ['metrics', 'options'] },
  {
    folder: 'store',
    why: "a run's files: requests.jsonl, results.json (its typed document names the engine detected and the /metrics read as types), atomic writes, loading a run, redaction",
    may: ['errors', 'metrics', 'synth', 'util'],
    types: ['options', 'server-engine', 'server-metrics'],
  },
  { folder: 'report', why: 'renderers only: never the network (client), the load, or who runs them; the option table for flag names', may: ['metrics', 'options', 'store', 'util'], types: ['conversation'] },
  {
    folder: 'cache-model',
    why: "the expected-cache model: each engine's semantics on prefix-cache's pool, the server's or the local token ids, the miss causes; fed by the load's request events",
    may: ['client', 'errors', 'metrics', 'options', 'prefix-cache', 'server-engine', 'server-metrics', 'tokenizer', 'util'],
  },
  { folder: 'load', why: 'the load: sessions, load models (executors), deadlines, worker threads; never prints or stores', may: ['cache-model', 'client', 'errors', 'metrics', 'options', 'prefix-cache', 'synth', 'tokenizer', 'util'], types: ['conversation'] },
  {
    folder: 'benchmark',
    why: 'one run, a sweep, a merge: wires every part below',
    may: ['cache-model', 'client', 'conversation', 'errors', 'live-metrics', 'load', 'metrics', 'options', 'report', 'server-engine', 'server-metrics', 'sim', 'store', 'synth', 'tokenizer', 'util'],
  },
  {
    folder: 'cli',
    why: 'the commands, the only place that prints',
    may: ['benchmark', 'conversation', 'errors', 'options', 'report', 'server-metrics', 'sim', 'store', 'synth', 'tokenizer', 'util'],
  },
  { folder: 'index.ts', why: 'the library API: every part but the CLI', may: ['benchmark', 'client', 'conversation', 'errors', 'load', 'metrics', 'options', 'sim', 'tokenizer'] },
];

const src = repoPath('src');

/** One import of one src/ file: the file it names, and whether it names types only. */
interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f));
}

/** The src/ file a relative specifier names (`./x.js` is `./x.ts`, a folder is its index.ts), or undefined. */
function resolveSpecifier(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(file), specifier);
  return [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate));
}

function importsOf(file: string): Import[] {
  const found: Import[] = [];
  const add = (specifier: string, typeOnly: boolean): void => {
    const to = resolveSpecifier(file, specifier);
    if (to !== undefined) found.push({ from: file, to, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier.text, node.importClause?.isTypeOnly ?? false);
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier.text, node.isTypeOnly);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] !== undefined && ts.isStringLiteral(node.arguments[0])) add(node.arguments[0].text, false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) add(node.argument.literal.text, true);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true));
  return found;
}

/** The folder of a src/ file: its first path segment (`load` for load/executors/x.ts), or the file's name at the top. */
function folderOf(file: string): string {
  return relative(src, file).split(sep)[0]!;
}

const show = (file: string): string => relative(dirname(src), file).split(sep).join('/');

/** The strongly connected groups of more than one file (Tarjan): each is an import cycle. */
function cycles(files: readonly string[], edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group.map(show).sort());
    }
  };
  for (const file of files) if (!index.has(file)) connect(file);
  return groups;
}

const files = sourceFiles(src);
const imports = files.flatMap(importsOf);
const layerOf = new Map(LAYERS.map((layer, rank) => [layer.folder, { layer, rank }]));

describe('src/ imports: no cycles, one way down the layers', () => {
  test('the reader finds imports of every kind', () => {
    const from = (path: string): Import[] => imports.filter((i) => i.from === join(src, path));
    assert.ok(from('benchmark/sweep.ts').some((i) => show(i.to) === 'src/report/sweep-html.ts' && !i.typeOnly), 'a dynamic import');
    assert.ok(from('metrics/record.ts').some((i) => show(i.to) === 'src/client/types.ts' && i.typeOnly), 'an import type');
    assert.ok(from('tokenizer/index.ts').some((i) => show(i.to) === 'src/tokenizer/resolve.ts'), 'an export ... from');
  });

  test('no import cycle among src/ files (type-only and dynamic imports count)', () => {
    const edges = new Map<string, string[]>();
    for (const i of imports) edges.set(i.from, [...(edges.get(i.from) ?? []), i.to]);
    assert.deepEqual(cycles(files, edges), []);
  });

  test('every folder of src/ has a layer, and a layer names only layers below it (exceptions aside)', () => {
    for (const folder of new Set(files.map(folderOf))) assert.ok(layerOf.has(folder), `src/${folder} has no entry in LAYERS`);
    LAYERS.forEach((layer, rank) => {
      for (const target of [...layer.may, ...(layer.types ?? [])]) {
        const below = layerOf.get(target);
        assert.ok(below !== undefined && below.rank < rank, `${layer.folder} may import ${target}, which is not below it: list it in \`upward\` with a reason, or move what it needs down`);
      }
      for (const target of Object.keys(layer.upward ?? {})) assert.ok((layerOf.get(target)?.rank ?? -1) > rank, `${layer.folder}'s exception ${target} is not above it`);
    });
  });

  test('every import between folders is one its layer allows', () => {
    const problems: string[] = [];
    for (const i of imports) {
      const from = folderOf(i.from);
      const to = folderOf(i.to);
      if (from === to) continue;
      const layer = layerOf.get(from)?.layer;
      if (layer === undefined) continue; // reported by the test above
      const allowed = layer.may.includes(to) || (i.typeOnly && (layer.types ?? []).includes(to)) || layer.upward?.[to] !== undefined;
      if (!allowed) {
        const how = (layer.types ?? []).includes(to) ? ' (only types may come from there: `import type`)' : '';
        problems.push(`${show(i.from)} imports ${show(i.to)}: ${from}/ may not import ${to}/${how}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  test('every exception is still needed', () => {
    for (const layer of LAYERS) {
      for (const target of Object.keys(layer.upward ?? {})) {
        assert.ok(
          imports.some((i) => folderOf(i.from) === layer.folder && folderOf(i.to) === target),
          `${layer.folder}/ no longer imports ${target}/: remove the exception from LAYERS`,
        );
      }
    }
  });
});
