import * as z from 'zod';
import { MAX_SECONDS } from '../define.js';

/** `--ramp-up linear:START:END:SECONDS`: the open loop's session rate goes from START to END (sessions/s) over SECONDS, then holds END. */
export interface RampUp {
  startPerSec: number;
  endPerSec: number;
  seconds: number;
}

/** `linear:START:END:SECONDS` as text, validated and parsed into a RampUp. */
export const rampUpSchema = z
  .string()
  .regex(/^linear:\d+(\.\d+)?:\d+(\.\d+)?:\d+(\.\d+)?$/, { error: 'expected linear:START:END:SECONDS, e.g. linear:1:20:60', abort: true })
  // Past a year a ramp is a slip (ms for s), as every chatload wait (issue #35).
  .refine((text) => Number(text.split(':')[3]) <= MAX_SECONDS, `expected SECONDS at most ${MAX_SECONDS.toLocaleString('en-US')} (a year)`)
  .transform((text): RampUp => {
    const [startPerSec, endPerSec, seconds] = text.split(':').slice(1).map(Number) as [number, number, number];
    return { startPerSec, endPerSec, seconds };
  });
