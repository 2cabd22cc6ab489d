import * as z from 'zod';
import { integer, nonNegativeInt, nonNegativeNumber, option, readInt, readJson, readNumber } from '../define.js';

/** What every request carries, and how a failed one is retried. */
/** The request body's keys chatload sets, and what to give instead of them in --extra-body. */
const OWN_BODY_KEYS: Readonly<Record<string, string>> = {
  messages: 'the history comes from the dataset (-i) and the answers',
  input: 'the history comes from the dataset (-i) and the answers',
  prompt: 'the history comes from the dataset (-i) and the answers',
  model: 'give --served-model-name (or -m)',
  stream: 'give --no-stream for non-streaming requests',
};

export const requestOptions = {
  endpoint: option({
    flags: '--endpoint <api>',
    group: 'requests',
    help: 'which API to call: chat (/v1/chat/completions), responses (/v1/responses) or completions (/v1/completions, the chat template applied by chatload)',
    schema: z.enum(['chat', 'responses', 'completions'], { error: (issue) => `expected chat, responses or completions, got ${JSON.stringify(issue.input)}` }),
    default: 'chat',
  }),
  responsesState: option({
    flags: '--responses-state <where>',
    group: 'requests',
    help: "with --endpoint responses: input (send the whole history as input items each turn, store: false) or server (send previous_response_id and the new message; the server keeps the history)",
    schema: z.enum(['input', 'server'], { error: (issue) => `expected input or server, got ${JSON.stringify(issue.input)}` }),
    default: 'input',
  }),
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
    help: 'JSON object merged into every request body (not messages, input, prompt, model or stream: chatload sets those)',
    read: readJson,
    schema: z.record(z.string(), z.unknown(), { error: 'expected a JSON object, e.g. \'{"top_p": 0.9}\'' }).superRefine((body, ctx) => {
      // Keys chatload itself sets from the conversation and the flags (issue #35): overriding them would send the same
      // prompt every turn, or another model, and the run would measure something else than it says.
      for (const [key, instead] of Object.entries(OWN_BODY_KEYS)) {
        if (Object.hasOwn(body, key)) ctx.addIssue({ code: 'custom', message: `sets "${key}", which chatload sends itself: ${instead}` });
      }
    }),
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
