import type { Conversation } from '../types.js';
import type { AgenticTraceFormat } from './formats.js';
import { MooncakeToolAgentReader } from './mooncake-toolagent.js';
import { OtelReader } from './otel.js';
import { WekaReader } from './weka.js';

export { AGENTIC_TRACE_FORMATS, DEFAULT_AGENTIC_BLOCK_SIZE, detectAgenticTraceFormat, isAgenticTraceFormat, type AgenticTraceFormat } from './formats.js';

/** A reader of one agentic format: rows (JSONL lines, or one whole document with `line` undefined), then finish(). */
export interface AgenticTraceReader {
  readonly format: AgenticTraceFormat;
  readonly rows: number;
  add(value: unknown, line: number | undefined): void;
  finish(): Conversation[];
}

/** The reader of `format`; `blockSize` is --trace-block-size (a Weka trace's own `block_size` wins). */
export function agenticTraceReader(
  format: AgenticTraceFormat,
  file: string,
  options: { blockSize?: number; window?: { startSec: number; endSec?: number } } = {},
): AgenticTraceReader {
  const tree = { file, window: options.window };
  if (format === 'weka') return new WekaReader(tree, options.blockSize);
  if (format === 'otel') return new OtelReader(tree, options.blockSize);
  return new MooncakeToolAgentReader(tree, options.blockSize);
}
