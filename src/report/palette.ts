import { ERROR_KINDS } from '../metrics/error-kinds.js';

/**
 * One colour per series on every chart of every page (issue 18: "expected cached" was yellow in one chart and blue in
 * the next). A series known by name (a percentile, a latency metric, a token kind, an error kind) always gets its
 * colour here; other names (run labels in compare, load points in sweep) take the palette's colours in the order
 * the caller gives them, skipping those a named series of the same chart holds, so the same order gives the same
 * colours on every chart of a page.
 */

/** The categorical palette (Plot's observable10). */
export const PALETTE = ['#4269d0', '#efb118', '#ff725c', '#6cc5b0', '#3ca951', '#ff8ab7', '#a463f2', '#97bbf5', '#9c6b4e', '#9498a0'] as const;

const [blue, yellow, red, teal, green, pink, purple, lightBlue, brown, grey] = PALETTE;

/** The fixed colours of named series. */
const NAMED: Readonly<Record<string, string>> = {
  // Percentiles and summaries of one metric.
  p50: blue,
  mean: blue,
  p90: yellow,
  p99: red,
  max: red,
  'p99.9': purple,
  // Latency metrics side by side.
  TTFT: blue,
  TPOT: yellow,
  ITL: teal,
  E2EL: purple,
  // Tokens and the prefix cache.
  'input tokens': lightBlue,
  'expected cached': grey,
  'cached (server)': green,
  // Throughput.
  'requests/s': blue,
  'output tokens/s': teal,
  // Single observations under percentile lines.
  request: grey,
  ...Object.fromEntries(ERROR_KINDS.map((kind, i) => [kind, [red, yellow, pink, purple, brown, teal, lightBlue, green, blue, grey, grey, grey][i]!])),
};

/** The colour of a named series, or undefined for a name the palette does not fix. */
export function namedColor(series: string): string | undefined {
  return NAMED[series];
}

/**
 * The colours of `domain` (a chart's series, in legend order): named ones fixed, the others in palette order of
 * `order` (all the series the page's charts may show, e.g. every run's label), so a series missing from one chart
 * does not shift the colours of the next.
 */
export function seriesColors(domain: readonly string[], order: readonly string[] = []): string[] {
  const unnamed = [...new Set([...order, ...domain])].filter((name) => namedColor(name) === undefined);
  const taken = new Set(domain.map(namedColor).filter((c) => c !== undefined));
  const free = PALETTE.filter((c) => !taken.has(c));
  return domain.map((name) => namedColor(name) ?? free[unnamed.indexOf(name) % free.length] ?? PALETTE[0]);
}
