import * as z from 'zod';
import { integer, option, readInt, text } from '../define.js';

/** The conversations replayed, and how their tokens are counted. */
export const datasetOptions = {
  inputFile: option({
    flags: '-i, --input-file <path>',
    group: 'dataset',
    help: 'conversations: the reference JSON list or JSONL, ShareGPT, or a generate_conversations config',
    defaultText: 'the built-in demo dataset',
    schema: text,
  }),
  tokenizer: option({
    flags: '--tokenizer <spec>',
    group: 'dataset',
    help: 'token counting: a tokenizer.json or model folder, a Hugging Face model id, tiktoken:cl100k_base|o200k_base, or approx',
    defaultText: 'the tokenizer of -m when it resolves locally, else approx',
    schema: text,
  }),
  trustRemoteCode: option({
    flags: '--trust-remote-code',
    group: 'dataset',
    help: 'accepted for compatibility (no effect: chatload never runs remote code)',
    schema: z.boolean(),
    default: false,
  }),
  allowInvalidUtf8: option({
    flags: '--allow-invalid-utf8',
    group: 'dataset',
    help: 'read bytes of the input files that are not UTF-8 as U+FFFD, with one warning per file, instead of refusing the file (which names the byte offset)',
    schema: z.boolean(),
    default: false,
  }),
  seed: option({ flags: '--seed <n>', group: 'dataset', help: 'seed of every random choice', read: readInt, schema: integer, default: 0 }),
  keepReasoning: option({
    flags: '--keep-reasoning',
    group: 'dataset',
    help: "send a reasoning model's reasoning back in the history (as the assistant message's reasoning_content), not only its answer",
    schema: z.boolean(),
    default: false,
  }),
  replayDatasetAnswers: option({
    flags: '--replay-dataset-answers',
    group: 'dataset',
    help: "put the recorded answers into the history instead of the server's",
    schema: z.boolean(),
    default: false,
  }),
  verifyOutput: option({
    flags: '--verify-output',
    group: 'dataset',
    help: "count answers that differ from the dataset's recorded answers",
    schema: z.boolean(),
    default: false,
  }),
};
