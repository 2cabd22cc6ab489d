import * as z from 'zod';
import { integer, MAX_SECONDS, nonNegativeInt, nonNegativeNumber, option, parsedText, positiveInt, positiveNumber, readInt, readNumber } from '../define.js';
import { checkSecondsSpec, parseDistributionFlagSpec } from '../values/distribution-spec.js';
import { rampUpSchema } from '../values/ramp-up.js';

/**
 * The load model. The reference's closed loop (-p/-k, the default), or open-loop sessions when --session-rate or
 * --ramp-up is given; docs/LOAD-MODELS.md explains both.
 */
export const loadOptions = {
  numClients: option({
    flags: '-p, --num-clients <n>',
    group: 'load',
    help: 'closed-loop clients, one request in flight each',
    read: readInt,
    schema: positiveInt,
    default: 1,
    // The built-in demo is a first-time user's first run: 16 clients over 32 conversations, drained (about 30 s).
    demoDefault: { value: 16 },
  }),
  maxActiveConversations: option({
    flags: '-k, --max-active-conversations <n>',
    group: 'load',
    help: 'conversations interleaved at a time, spread across clients',
    defaultText: '--num-clients',
    demoDefault: { value: 32, unlessGiven: 'numClients' },
    read: readInt,
    schema: positiveInt,
  }),
  conversationSampling: option({
    flags: '--conversation-sampling <how>',
    group: 'load',
    help: 'which active conversation a client sends next: round_robin or random',
    schema: z.enum(['round_robin', 'random'], { error: (issue) => `expected round_robin or random, got ${JSON.stringify(issue.input)}` }),
    default: 'round_robin',
  }),
  requestRate: option({
    flags: '--request-rate <r>',
    group: 'load',
    help: 'mean requests/s per client (Poisson, on an absolute schedule); 0 = no pause',
    read: readNumber,
    schema: nonNegativeNumber,
    default: 0,
  }),
  earlyStop: option({
    flags: '--early-stop',
    group: 'load',
    help: 'stop when the first client runs out of work',
    negation: { flags: '--no-early-stop', help: 'keep going until every conversation is done' },
    schema: z.boolean(),
    default: true,
    demoDefault: { value: false },
  }),
  warmupStep: option({
    flags: '--warmup-step',
    group: 'load',
    help: 'send the first turn of every conversation first, as unmeasured warmup',
    schema: z.boolean(),
    default: false,
  }),
  maxTurns: option({
    flags: '--max-turns <n>',
    group: 'load',
    help: 'cap on messages per conversation, user and assistant together',
    read: readInt,
    schema: integer.min(2, 'counts messages (user and assistant): expected 2 or more'),
  }),
  sessionRate: option({
    flags: '--session-rate <r>',
    group: 'load',
    help: 'open loop: new conversations per second (gamma arrivals, see --burstiness); replaces the closed loop',
    read: readNumber,
    schema: positiveNumber,
  }),
  burstiness: option({
    flags: '--burstiness <k>',
    group: 'load',
    help: 'open loop: gamma shape of inter-arrival times; 1 = Poisson, < 1 burstier',
    read: readNumber,
    schema: positiveNumber,
    default: 1,
  }),
  rampUp: option({
    flags: '--ramp-up <spec>',
    group: 'load',
    help: 'open loop: linear:START:END:SECONDS ramps the session rate, then holds END',
    schema: rampUpSchema,
  }),
  maxConcurrency: option({
    flags: '--max-concurrency <n>',
    group: 'load',
    help: 'open loop and trace replay: requests in flight at most; time waiting for a slot is recorded as queue time',
    read: readInt,
    schema: positiveInt,
  }),
  maxQueue: option({
    flags: '--max-queue <n>',
    group: 'load',
    help: 'with --max-concurrency: requests waiting for a slot at most; one that finds the queue full is dropped (its session ends) and counted in dropped_requests',
    defaultText: 'no bound',
    read: readInt,
    schema: nonNegativeInt,
  }),
  traceSpeed: option({
    flags: '--trace-speed <x>',
    group: 'load',
    help: 'trace replay: divides the trace\'s time by X (2 = twice as fast, 0.5 = half speed)',
    read: readNumber,
    schema: positiveNumber,
    default: 1,
  }),
  thinkTime: option({
    flags: '--think-time <dist>',
    group: 'load',
    help: 'open loop: pause before each next turn, seconds: a distribution, e.g. exponential:5 or uniform:2:8',
    defaultText: "the dataset's per-turn values, else none",
    schema: parsedText((text) => checkSecondsSpec(parseDistributionFlagSpec(text, ''), MAX_SECONDS, '')),
  }),
};
