// Where a process's CPU went, from a V8 CPU profile (`node --cpu-prof`): self time grouped by what ran it. Used by
// bench/startup.ts to show what chatload's start-up spends its time on.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
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
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map<number, ProfileNode>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n);
  const totals = new Map<string, number>();
  let atUs = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    atUs += profile.timeDeltas[i]!;
    if (atUs > untilUs) break;
    // A sample stands for the time until the next one.
    const spanUs = profile.timeDeltas[i + 1] ?? 0;
    const part = partOf(nodes.get(profile.samples[i]!)!, parents);
    if (part === '(idle)') continue;
    totals.set(part, (totals.get(part) ?? 0) + spanUs / 1000);
  }
  return [...totals].map(([part, ms]) => ({ part, ms })).sort((a, b) => b.ms - a.ms);
}
