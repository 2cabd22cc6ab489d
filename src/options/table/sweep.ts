import * as z from 'zod';
import { option, positiveInt, positiveNumber, readInt, readNumber } from '../define.js';

/** `1,4,16` as a list of numbers (the schema checks what kind). */
const readNumberList = z.string().transform((value, ctx): number[] => {
  const values = value.split(',').map((part) => Number(part.trim()));
  if (values.every((v) => Number.isFinite(v) && v > 0)) return values;
  ctx.addIssue({ code: 'custom', message: `expected comma-separated positive numbers, e.g. 1,4,16; got ${JSON.stringify(value)}` });
  return z.NEVER;
});

/** The load points of `chatload sweep` (beside every run option): exactly one of --concurrency, --session-rates or --search. */
export const sweepOptions = {
  concurrency: option({
    flags: '--concurrency <list>',
    group: 'sweep',
    help: 'closed-loop client counts, e.g. 1,4,16',
    read: readNumberList,
    schema: z.array(z.number().int('expected whole numbers of clients').positive()).min(1),
  }),
  sessionRates: option({
    flags: '--session-rates <list>',
    group: 'sweep',
    help: 'open-loop session rates (sessions/s), e.g. 1,2,4',
    read: readNumberList,
    schema: z.array(positiveNumber).min(1),
  }),
  search: option({
    flags: '--search',
    group: 'sweep',
    help: 'bisect the session rate between --min-rate and --max-rate for the highest that meets the SLOs',
    schema: z.boolean(),
    default: false,
  }),
  minRate: option({ flags: '--min-rate <r>', group: 'sweep', help: 'lowest session rate of --search', read: readNumber, schema: positiveNumber }),
  maxRate: option({ flags: '--max-rate <r>', group: 'sweep', help: 'highest session rate of --search', read: readNumber, schema: positiveNumber }),
  searchSteps: option({ flags: '--search-steps <n>', group: 'sweep', help: 'bisection steps of --search', read: readInt, schema: positiveInt, default: 5 }),
  sloShare: option({
    flags: '--slo-share <fraction>',
    group: 'sweep',
    help: 'share of requests that must meet the SLOs for a rate to pass',
    read: readNumber,
    schema: positiveNumber,
    default: 0.9,
  }),
};
