import * as z from 'zod';
import { integer, nonNegativeInt, nonNegativeNumber, option, readInt, readJson, readNumber } from '../define.js';

/** What every request carries, and how a failed one is retried. */
export const requestOptions = {
  stream: option({ flags: '--no-stream', group: 'requests', help: 'ask for non-streaming responses', schema: z.boolean(), default: true }),
  limitMinTokens: option({
    flags: '--limit-min-tokens <n>',
    group: 'requests',
    help: "min_tokens per request: 0 = the recorded answer's length, negative = none",
    read: readInt,
    schema: integer,
    default: 0,
  }),
  limitMaxTokens: option({
    flags: '--limit-max-tokens <n>',
    group: 'requests',
    help: "max_tokens per request: 0 = the recorded answer's length, negative = none",
    read: readInt,
    schema: integer,
    default: 0,
  }),
  temperature: option({ flags: '--temperature <t>', group: 'requests', help: 'sampling temperature to send', read: readNumber, schema: nonNegativeNumber }),
  extraBody: option({
    flags: '--extra-body <json>',
    group: 'requests',
    help: 'JSON object merged into every request body',
    read: readJson,
    schema: z.record(z.string(), z.unknown(), { error: 'expected a JSON object, e.g. \'{"top_p": 0.9}\'' }),
  }),
  ignoreEos: option({ flags: '--ignore-eos', group: 'requests', help: 'send ignore_eos: true', schema: z.boolean(), default: false }),
  sendConversationId: option({
    flags: '--send-conversation-id',
    group: 'requests',
    help: 'send body conversation_id and header X-Session-ID',
    schema: z.boolean(),
    default: false,
  }),
  maxRetries: option({
    flags: '--max-retries <n>',
    group: 'requests',
    help: 'retries of a retryable failure, with exponential backoff honouring Retry-After',
    env: 'MULTITURN_BENCH_MAX_RETRIES',
    read: readInt,
    schema: nonNegativeInt,
    default: 0,
  }),
};
