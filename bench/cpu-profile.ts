// Where a process's CPU went, from a V8 CPU profile (`node --cpu-prof`): self time grouped by what ran it. Used by
// bench/startup.ts to show what chatload's start-up spends its time on, and where a whole run's CPU goes.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

function readProfile(path: string): CpuProfile {
  return JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
}

/**
 * The time sample i stands for: until the next sample, at most 5 ms. A longer gap is the thread blocked in a system
 * call (an fsync at the end of a run) with no sample taken, not CPU.
 */
function sampleSpanUs(profile: CpuProfile, i: number): number {
  return Math.min(profile.timeDeltas[i + 1] ?? 0, 5000);
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** Monotonic µs (CLOCK_MONOTONIC, the clock of process.hrtime). */
  startTime: number;
  samples: number[];
  /** µs since the previous sample; the first is from startTime. */
  timeDeltas: number[];
}

/**
 * Node internals that load modules: resolving (URL and path parsing, stat, package.json), reading (fs, decoding),
 * compiling (ESM compileSourceTextModule, CJS wrapSafe) and Node's own lazily loaded built-ins. At start-up almost
 * all of their time is module loading; a file the program itself reads counts here too.
 */
const LOADER = /^node:(internal\/(modules|vm|fs|url|encoding|bootstrap|per_context|deps\/cjs-module-lexer)|fs$|path$|url$|module$)/;
const LOADER_PART = 'node: loading modules (resolve, read, compile) and files';

/**
 * The part of the program a frame belongs to: a package under node_modules, a folder of dist/, Node's module loading
 * (LOADER), the rest of Node's internals, or V8's own rows ("(garbage collector)", "(program)"). A native frame (no
 * URL: a file read, JSON.parse) counts for the JS frame that called it.
 */
function partOf(node: ProfileNode, parents: ReadonlyMap<number, ProfileNode>): string {
  let frame = node.callFrame;
  if (frame.url === '' && frame.functionName.startsWith('(')) return frame.functionName;
  for (let at: ProfileNode | undefined = node; frame.url === '' && at !== undefined; at = parents.get(at.id)) frame = at.callFrame;
  const url = frame.url;
  if (url === '' || LOADER.test(url)) return LOADER_PART;
  if (url.startsWith('node:')) return 'node: other internals (http, net, timers, ...)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1]!;
  const dist = /\/dist\/(?:([^/]+)\/)?[^/]+$/.exec(url);
  if (dist) return `chatload dist/${dist[1] ?? ''}`;
  return 'other';
}

/** Self CPU ms per part, largest first, over the samples taken before `untilUs` (CLOCK_MONOTONIC µs) if given. */
export function cpuByPart(profilePath: string, untilUs = Infinity): Array<{ part: string; ms: number }> {
  const profile = readProfile(profilePath);
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map<number, ProfileNode>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n);
  const totals = new Map<string, number>();
  let atUs = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    atUs += profile.timeDeltas[i]!;
    if (atUs > untilUs) break;
    const spanUs = sampleSpanUs(profile, i);
    const part = partOf(nodes.get(profile.samples[i]!)!, parents);
    if (part === '(idle)') continue;
    totals.set(part, (totals.get(part) ?? 0) + spanUs / 1000);
  }
  return [...totals].map(([part, ms]) => ({ part, ms })).sort((a, b) => b.ms - a.ms);
}

/**
 * Where a whole run's CPU goes (bench/startup.ts, issue 17 part 4), on the unbundled dist/ so frames name their
 * files: a sample belongs to a phase when any frame of its stack matches one (outermost rules: the report, the
 * end-of-run analysis, the printed summary), else to the innermost frame matching a component (so Node's internals
 * count for the part that called them: a socket write for undici, a string decode for the SSE reader). Sampled ms
 * include the profiler's own overhead; read the shares.
 */
const PHASES: Array<[string, RegExp]> = [
  ['report.html (read the files back, render)', /^writeRunReports |^writeReportsFor /],
  ['end of run (analysis, results.json, summary)', /^analyzeRun |^printResult |^writeJsonAtomic /],
];
const COMPONENTS: Array<[string, RegExp]> = [
  ['GC', /^\(garbage collector\)/],
  ['expected-cache model (cache-model/, prefix-cache/, the answer encoded)', /dist\/(cache-model\/|prefix-cache\/)|^encodeIdsYielding /],
  ['local token counts (load/message-tokens)', /dist\/load\/message-tokens|^countTextYielding /],
  ['requests.jsonl (record-writer, store/requests-jsonl)', /dist\/(benchmark\/record-writer|store\/requests-jsonl)/],
  ['record and aggregate (metrics/)', /dist\/metrics\//],
  ['SSE read (client/sse-reader, read-body, response-collector, chunk-shape)', /dist\/client\/(sse-reader|read-body|response-collector|chunk-shape)/],
  ['send (client/chat-client, request-body, request-timer)', /dist\/client\//],
  ['undici (HTTP/1, llhttp)', /node_modules\/undici\/|^wasm-function/],
  ['load (turn, load model, conversations)', /dist\/load\//],
  ["the floor client's own code", /client-floor\.mjs/],
  ['start-up: loading modules', /node:internal\/(modules|vm)|^compileSourceTextModule |^wrapSafe /],
];
/** When no frame of the stack is one of COMPONENTS: the innermost frame of these (Node's own internals last). */
const FALLBACKS: Array<[string, RegExp]> = [
  ['chatload, other (cli, options, dataset, ...)', /\/dist\//],
  ['dependencies, other', /node_modules\//],
  ['node: http, net, streams, timers, promises (called by none of the above)', /node:/],
];

/** The rule matching the innermost frame of `stack` (leaf first) that any rule matches. */
function innermost(stack: readonly string[], rules: ReadonlyArray<[string, RegExp]>): string | undefined {
  for (const frame of stack) for (const [part, re] of rules) if (re.test(frame)) return part;
  return undefined;
}

/** Self CPU ms per phase or component of a whole run (see PHASES and COMPONENTS), largest first. */
export function cpuByComponent(profilePath: string): Array<{ part: string; ms: number }> {
  const profile = readProfile(profilePath);
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map<number, ProfileNode>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n);
  const name = (n: ProfileNode): string => `${n.callFrame.functionName} ${n.callFrame.url}`;
  const totals = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const leaf = nodes.get(profile.samples[i]!)!;
    if (leaf.callFrame.functionName === '(idle)') continue;
    const stack: string[] = [];
    for (let at: ProfileNode | undefined = leaf; at !== undefined; at = parents.get(at.id)) stack.push(name(at));
    const part =
      PHASES.find(([, re]) => stack.some((frame) => re.test(frame)))?.[0] ??
      innermost(stack, COMPONENTS) ??
      innermost(stack, FALLBACKS.slice(0, 2)) ??
      innermost(stack, FALLBACKS.slice(2)) ??
      (leaf.callFrame.functionName || 'other');
    totals.set(part, (totals.get(part) ?? 0) + sampleSpanUs(profile, i) / 1000);
  }
  return [...totals].map(([part, ms]) => ({ part, ms })).sort((a, b) => b.ms - a.ms);
}
