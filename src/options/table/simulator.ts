import { option, parsedText, text } from '../define.js';
import { parseFaultSpec } from '../values/fault-spec.js';

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
};
