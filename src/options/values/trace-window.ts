import * as z from 'zod';

/** `--trace-window START:END`: replay the trace's sessions starting in [START, END) seconds of its own clock; END may be left out. */
export interface TraceWindow {
  startSec: number;
  endSec?: number;
}

/** `START:END` (seconds, END optional) as text, validated and parsed into a TraceWindow. */
export const traceWindowSchema = z
  .string()
  .regex(/^\d+(\.\d+)?:(\d+(\.\d+)?)?$/, 'expected START:END in seconds of the trace, e.g. 600:1200 (or 600: to the end)')
  .transform((text): TraceWindow => {
    const [start, end] = text.split(':') as [string, string];
    return end === '' ? { startSec: Number(start) } : { startSec: Number(start), endSec: Number(end) };
  })
  .refine((w) => w.endSec === undefined || w.endSec > w.startSec, 'expected END after START');
