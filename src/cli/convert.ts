import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { describeShareGptReport, parseJsonWithLocation, ShareGptConverter, streamJsonList, writeConversations, type ShareGptOptions } from '../conversation/index.js';
import { SIZE_BOUNDS } from '../conversation/size-bounds.js';
import { ConfigError, DatasetError } from '../errors/index.js';
import { utf8Lines } from '../util/utf8-text.js';
import { integer, positiveInt } from './parse.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';
import { statInputFile } from '../util/input-file.js';

/** Flags of `chatload convert sharegpt`, as commander parses them: the conversion's filters, the seed always given. */
export type ConvertFlags = Omit<ShareGptOptions, 'source' | 'seed'> & { seed: number };

async function startsWithList(file: string): Promise<boolean> {
  // Not a pipe or a FIFO: opening a FIFO with no writer would block.
  await statInputFile(file, (why) => new DatasetError({ file }, why));
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new DatasetError({ file }, `cannot read the file: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return /^\s*\[/.test(buffer.toString('utf8', 0, bytesRead).replace(/^\uFEFF/, ''));
  } finally {
    await handle.close();
  }
}

/**
 * Converts a ShareGPT file (a JSON list, streamed item by item, or JSONL) to chatload's conversation format and
 * writes it to `output` (JSON list, or JSONL for `.jsonl`). Returns the one-line report of what was kept, merged
 * and dropped.
 */
export async function convertShareGpt(input: string, output: string, flags: ConvertFlags): Promise<string> {
  // LLaVA-style items' image files: --image-dir, else beside the input file.
  const options: ShareGptOptions = { seed: flags.seed, imageDir: flags.imageDir ?? dirname(input), source: input };
  if (flags.maxItems !== undefined) options.maxItems = flags.maxItems;
  if (flags.minTurns !== undefined) options.minTurns = flags.minTurns;
  if (flags.maxTurns !== undefined) options.maxTurns = flags.maxTurns;
  if (flags.minContentLen !== undefined) options.minContentLen = flags.minContentLen;
  if (flags.maxContentLen !== undefined) options.maxContentLen = flags.maxContentLen;
  if (options.minTurns !== undefined && options.maxTurns !== undefined && options.minTurns > options.maxTurns) {
    throw new ConfigError(`--min-turns ${options.minTurns} is larger than --max-turns ${options.maxTurns}`);
  }
  const converter = new ShareGptConverter(options);
  let index = 0;
  if (await startsWithList(input)) {
    for await (const element of streamJsonList(input, { maxElementChars: SIZE_BOUNDS.itemChars })) converter.add(parseJsonWithLocation(element.text, input, element.line - 1), index++);
  } else {
    const lines = utf8Lines(input, { maxLineChars: SIZE_BOUNDS.itemChars });
    let lineNumber = 0;
    for await (const line of lines) {
      lineNumber += 1;
      if (line.trim() !== '') converter.add(parseJsonWithLocation(line, input, lineNumber - 1), index++);
    }
  }
  const { conversations, report } = converter.finish();
  if (conversations.length === 0) throw new DatasetError({ file: input }, `no conversation survived the conversion: ${describeShareGptReport(report)}`);
  await writeConversations(output, conversations);
  return describeShareGptReport(report);
}

/** Adds `chatload convert sharegpt IN OUT`. */
export function registerConvertCommand(program: Command): void {
  const convert = program.command('convert').description(COMMAND_DESCRIPTIONS.convert).addHelpText('after', examplesText('convert'));
  convert
    .command('sharegpt')
    .description('Convert a ShareGPT file (JSON list or JSONL) to the reference conversation format (.json) or JSONL (.jsonl).')
    .addHelpText('after', examplesText('convert sharegpt'))
    .argument('<input>', 'ShareGPT file')
    .argument('<output>', 'output file: .json or .jsonl')
    .option('--seed <n>', 'seed for choosing conversations when there are more than --max-items', integer, 0)
    .option('--max-items <n>', 'keep at most this many conversations (a seeded random choice, in file order)', positiveInt)
    .option('--min-turns <n>', 'drop conversations with fewer messages (user and assistant together)', positiveInt)
    .option('--max-turns <n>', 'cut conversations to at most this many messages', positiveInt)
    .option('--min-content-len <n>', 'drop conversations with a message shorter than this (characters)', positiveInt)
    .option('--max-content-len <n>', 'drop conversations with a message longer than this (characters)', positiveInt)
    .option('--image-dir <dir>', "folder of LLaVA-style items' \"image\" files, each sent as a data URL image part (default: the input file's folder)")
    .action(async (input: string, output: string, flags: ConvertFlags) => {
      const report = await convertShareGpt(input, output, flags);
      process.stderr.write(`chatload convert sharegpt: ${report} -> ${output}\n`);
    });
  convert.exitOverride();
  for (const command of convert.commands) command.exitOverride();
}
