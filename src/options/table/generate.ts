import * as z from 'zod';
import { option, retold, text } from '../define.js';
import { datasetOptions } from './dataset.js';
import { targetOptions } from './target.js';

/**
 * The options of `chatload generate`: its own -i and -o, and the run options it shares (--seed, --tokenizer,
 * --trust-remote-code, and -m with the help that fits here), declared once in the run option table.
 */
export const generateOptions = {
  inputFile: option({ flags: '-i, --input-file <file>', group: 'dataset', help: 'generation config (JSON, "filetype": "generate_conversations")', required: true, schema: text }),
  outputFile: option({ flags: '-o, --output-file <file>', group: 'outputs', help: 'where to write the conversations: .json (the reference list) or .jsonl', required: true, schema: text }),
  seed: datasetOptions.seed,
  tokenizer: datasetOptions.tokenizer,
  model: retold(targetOptions.model, { group: 'dataset', help: 'model whose tokenizer to use when --tokenizer is not given (local folder or HF cache)', defaultText: undefined }),
  printStats: option({ flags: '--print-stats', group: 'outputs', help: 'print the distributions of turns, user, assistant and request tokens', schema: z.boolean(), default: false }),
  trustRemoteCode: datasetOptions.trustRemoteCode,
  allowInvalidUtf8: datasetOptions.allowInvalidUtf8,
};
