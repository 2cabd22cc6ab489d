/**
 * Whether n values support a percentile: p needs at least 1 / (1 - p/100) of them (p99 needs 100, p99.9 1000), as
 * the reference's tables do. With fewer, the p-th percentile is just the maximum (or an interpolation towards it), so
 * the terminal, the live view and the reports show '-' instead of a number that claims a tail it has not seen.
 */
export function percentileSupported(p: number, n: number): boolean {
  if (p <= 50) return n >= 1;
  return n >= Math.round(1 / (1 - p / 100));
}

/** The fewest values that support percentile p (p99: 100, p99.9: 1000). */
export function minCountFor(p: number): number {
  return p <= 50 ? 1 : Math.round(1 / (1 - p / 100));
}
