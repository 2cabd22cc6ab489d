import * as z from 'zod';

/** `--ramp-up linear:START:END:SECONDS`: the open loop's session rate goes from START to END (sessions/s) over SECONDS, then holds END. */
export interface RampUp {
  startPerSec: number;
  endPerSec: number;
  seconds: number;
}

/** `linear:START:END:SECONDS` as text, validated and parsed into a RampUp. */
export const rampUpSchema = z
  .string()
  .regex(/^linear:\d+(\.\d+)?:\d+(\.\d+)?:\d+(\.\d+)?$/, 'expected linear:START:END:SECONDS, e.g. linear:1:20:60')
  .transform((text): RampUp => {
    const [startPerSec, endPerSec, seconds] = text.split(':').slice(1).map(Number) as [number, number, number];
    return { startPerSec, endPerSec, seconds };
  });
