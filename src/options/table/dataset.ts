import * as z from 'zod';
import { integer, option, positiveInt, readInt, text } from '../define.js';
import { traceFilterSchema } from '../values/trace-filter.js';
import { traceWindowSchema } from '../values/trace-window.js';
import { columnMapSchema } from '../values/column-map.js';

/** The conversations replayed, and how their tokens are counted. */
export const datasetOptions = {
  inputFile: option({
    flags: '-i, --input-file <path>',
    group: 'dataset',
    help: 'conversations: the reference JSON list or JSONL, ShareGPT, a generate_conversations config, a production trace (Mooncake or Bailian JSONL, Azure LLM inference or BurstGPT CSV, an agentic trace), or a Hugging Face dataset on disk (Parquet, Arrow, a save_to_disk folder or a folder of Parquet shards); all detected',
    defaultText: 'the built-in demo dataset',
    schema: text,
  }),
  inputFormat: option({
    flags: '--input-format <format>',
    group: 'dataset',
    help: 'read -i as a production trace of this format: mooncake, bailian (JSONL, detected by their fields otherwise), azure or burstgpt (CSV, detected by their header line otherwise), or an agentic trace: weka, otel or mooncake-toolagent (all but mooncake-toolagent are detected otherwise)',
    defaultText: 'detected',
    schema: z.enum(['mooncake', 'bailian', 'azure', 'burstgpt', 'weka', 'otel', 'mooncake-toolagent'], {
      error: (issue) => `expected mooncake, bailian, azure, burstgpt, weka, otel or mooncake-toolagent, got ${JSON.stringify(issue.input)}`,
    }),
  }),
  columns: option({
    flags: '--columns <mapping>',
    group: 'dataset',
    help: "which columns of a Hugging Face dataset (Parquet, Arrow, JSONL, a folder) hold what: KEY=COLUMN pairs, keys messages, id, prompt, response, system (e.g. messages=conversations,id=conv_id)",
    defaultText: 'detected: messages, conversations (ShareGPT from/value), or prompt/response, instruction/output, question/answer pairs',
    schema: columnMapSchema,
  }),
  split: option({
    flags: '--split <name>',
    group: 'dataset',
    help: 'the split of a Hugging Face dataset folder to read (a DatasetDict saved with save_to_disk, or Parquet shards named by split)',
    defaultText: "train, or the folder's only split",
    schema: text,
  }),
  traceBlockSize: option({
    flags: '--trace-block-size <tokens>',
    group: 'dataset',
    help: "tokens per hash_ids block of a trace: each id becomes a block of exactly this many tokens (the last one trimmed to input_length)",
    defaultText: '512 for Mooncake, 16 for Bailian',
    read: readInt,
    schema: positiveInt,
  }),
  traceWindow: option({
    flags: '--trace-window <start:end>',
    group: 'dataset',
    help: "replay only the trace's sessions starting in [START, END) seconds of the trace's own clock; END may be left out",
    schema: traceWindowSchema,
  }),
  traceFilter: option({
    flags: '--trace-filter <filter>',
    group: 'dataset',
    help: "which rows of an Azure or BurstGPT trace are replayed: KEY=VALUE pairs separated by commas, alternatives by | (model=ChatGPT|GPT-4, log=Conversation log, failed=skip|keep|only; failed: rows with zero output tokens)",
    defaultText: 'every row but the failed ones (failed=skip)',
    schema: traceFilterSchema,
  }),
  tokenizer: option({
    flags: '--tokenizer <spec>',
    group: 'dataset',
    help: "token counting: a tokenizer.json or model folder, a Hugging Face model id, tiktoken:cl100k_base|o200k_base, approx, or server (the expected cache in the server's own token ids: llama.cpp's or vLLM's tokenize endpoints)",
    defaultText: "the tokenizer of -m when it resolves locally, else the server's tokenize endpoints for the expected cache (llama.cpp, vLLM) and approx for the rest",
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
