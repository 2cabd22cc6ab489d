import { counted } from '../../util/plural.js';

/** The open loops' cap: requests in flight at most (--max-concurrency) and waiting for a slot at most (--max-queue). */
export interface QueueCap {
  maxConcurrency?: number;
  maxQueue?: number;
}

/** The cap's problems: a cap of at least 1, a queue bound of at least 0 and only with a cap. */
export function validateCap(cap: QueueCap): string[] {
  const problems: string[] = [];
  const { maxConcurrency, maxQueue } = cap;
  if (maxConcurrency !== undefined && !(Number.isInteger(maxConcurrency) && maxConcurrency >= 1)) problems.push(`maxConcurrency: expected a whole number >= 1, got ${maxConcurrency}`);
  if (maxQueue !== undefined && !(Number.isInteger(maxQueue) && maxQueue >= 0)) problems.push(`maxQueue: expected a whole number >= 0, got ${maxQueue}`);
  if (maxQueue !== undefined && maxConcurrency === undefined) problems.push('maxQueue: bounds the wait for a maxConcurrency slot, and there is no maxConcurrency');
  return problems;
}

/** The cap as the load model's line says it: `, at most 8 requests in flight, 16 queued (more dropped)`. */
export function describeCap(cap: QueueCap): string {
  if (cap.maxConcurrency === undefined) return '';
  const queue = cap.maxQueue === undefined ? '' : `, ${cap.maxQueue} queued at most (more dropped)`;
  return `, at most ${counted(cap.maxConcurrency, 'request')} in flight${queue}`;
}
