import * as z from 'zod';
import { option, parsedText, readInt, text } from '../define.js';
import { parseFaultSpec } from '../values/fault-spec.js';
import { DEFAULT_ROUTER, MAX_REPLICAS, ROUTER_KINDS } from '../values/replicas.js';

/** The built-in simulator that a run without --url starts (docs/SIMULATOR.md). */
export const simulatorOptions = {
  simProfile: option({
    flags: '--sim-profile <name>',
    group: 'simulator',
    help: 'profile of the built-in simulator when there is no --url',
    schema: text,
    default: 'demo',
  }),
  simFaults: option({
    flags: '--sim-faults <spec>',
    group: 'simulator',
    help: 'fault injection of the built-in simulator, e.g. 500=0.01,429=0.02',
    schema: parsedText((spec) => parseFaultSpec(spec, '')),
  }),
  simReplicas: option({
    flags: '--sim-replicas <n>',
    group: 'simulator',
    help: `replicas of the built-in simulator behind its router, each with its own KV cache and scheduler (1-${MAX_REPLICAS})`,
    read: readInt,
    schema: z
      .number({ error: `expected a whole number of replicas from 1 to ${MAX_REPLICAS}` })
      .int(`expected a whole number of replicas from 1 to ${MAX_REPLICAS}`)
      .min(1, `expected a whole number of replicas from 1 to ${MAX_REPLICAS}`)
      .max(MAX_REPLICAS, `expected a whole number of replicas from 1 to ${MAX_REPLICAS}`),
    default: 1,
  }),
  simRouter: option({
    flags: '--sim-router <kind>',
    group: 'simulator',
    help: `how the built-in simulator's router picks a replica: ${ROUTER_KINDS.join(', ')} (sticky follows the X-Session-ID header that --send-conversation-id sends; docs/SIMULATOR.md)`,
    schema: z.enum(ROUTER_KINDS, { error: (issue) => `expected ${ROUTER_KINDS.join(', ')}, got ${JSON.stringify(issue.input)}` }),
    default: DEFAULT_ROUTER,
  }),
};
