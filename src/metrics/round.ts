/** Rounds a millisecond value to 3 decimals (microseconds): enough for any timer Node has, and keeps JSON short. */
export function roundMs(valueMs: number): number {
  return Math.round(valueMs * 1000) / 1000;
}
