/**
 * A count and its noun, singular for exactly one: `counted(1, 'conversation')` is "1 conversation",
 * `counted(3, 'conversation')` "3 conversations", `counted(2, 'entry', 'entries')` "2 entries". `shown` is how the
 * number is written when not as is (e.g. with thousands separators).
 */
export function counted(n: number, singular: string, plural = `${singular}s`, shown: string = String(n)): string {
  return `${shown} ${n === 1 ? singular : plural}`;
}

/** "was" or "were", as `n` things take. */
export function wasWere(n: number): string {
  return n === 1 ? 'was' : 'were';
}
