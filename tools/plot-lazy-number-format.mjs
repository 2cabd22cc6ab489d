// An esbuild plugin for the package's bundle (tools/bundle.mjs): @observablehq/plot builds an Intl.NumberFormat when
// it is imported (format.js: `formatDefault = formatAuto()` makes one at once), and the first Intl formatter of a
// process loads ICU's locale data: ~11 ms of CPU, a third of importing the HTML renderer at the end of `chatload run`
// (issue 17). The report's charts never format a number through it (their ticks use d3-format), so the patch makes
// formatNumber create its formatter on first use instead, the same formatter with the same output. The build fails
// if Plot's code no longer reads as patched here, so the patch cannot go stale silently.
import { readFileSync } from 'node:fs';

const EAGER = `export function formatNumber(locale = "en-US") {
  const format = numberFormat(locale);
  return (i) => (i != null && !isNaN(i) ? format.format(i) : undefined);
}`;
const LAZY = `export function formatNumber(locale = "en-US") {
  let format;
  return (i) => (i != null && !isNaN(i) ? (format ??= numberFormat(locale)).format(i) : undefined);
}`;

export const plotLazyNumberFormat = {
  name: 'plot-lazy-number-format',
  setup(build) {
    build.onLoad({ filter: /[/\\]@observablehq[/\\]plot[/\\]src[/\\]format\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(EAGER)) throw new Error(`bundle: ${args.path} no longer has the formatNumber that tools/plot-lazy-number-format.mjs patches: review the patch`);
      return { contents: text.replace(EAGER, LAZY), loader: 'js' };
    });
  },
};
