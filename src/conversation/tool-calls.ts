import { DatasetError, type DatasetLocation } from '../errors/index.js';
import type { ToolCall } from '../tokenizer/types.js';

/**
 * Checks an assistant message's `tool_calls` (OpenAI's shape: `[{id, type: "function", function: {name, arguments}}]`).
 * `arguments` is a JSON text; an object is accepted and written as its JSON. Throws naming `tool_calls[i].field`.
 */
export function validateToolCalls(value: unknown, at: DatasetLocation): ToolCall[] {
  if (!Array.isArray(value) || value.length === 0) throw new DatasetError(at, 'expected "tool_calls" to be a non-empty array');
  const ids = new Set<string>();
  return value.map((raw: unknown, i) => {
    const call = raw as Record<string, unknown> | null;
    if (typeof call !== 'object' || call === null || Array.isArray(call)) throw new DatasetError(at, `expected "tool_calls[${i}]" to be an object {"id", "type", "function"}`);
    if (typeof call.id !== 'string' || call.id === '') throw new DatasetError(at, `expected "tool_calls[${i}].id" to be a non-empty string`);
    if (ids.has(call.id)) throw new DatasetError(at, `"tool_calls[${i}].id" repeats id ${JSON.stringify(call.id)}`);
    ids.add(call.id);
    if (call.type !== undefined && call.type !== 'function') throw new DatasetError(at, `expected "tool_calls[${i}].type" to be "function"`);
    const fn = call.function as Record<string, unknown> | null | undefined;
    if (typeof fn !== 'object' || fn === null || typeof fn.name !== 'string') throw new DatasetError(at, `expected "tool_calls[${i}].function.name" to be a string`);
    const args = fn.arguments ?? '';
    if (typeof args !== 'string' && (typeof args !== 'object' || args === null)) throw new DatasetError(at, `expected "tool_calls[${i}].function.arguments" to be a JSON string`);
    return { id: call.id, type: 'function', function: { name: fn.name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } };
  });
}

/** Checks a conversation's `tools` (OpenAI tool definitions, sent as they are): an array of objects with a `type`. */
export function validateTools(value: unknown, at: DatasetLocation): Record<string, unknown>[] {
  if (!Array.isArray(value)) throw new DatasetError(at, 'expected "tools" to be an array of tool definitions');
  value.forEach((tool: unknown, i) => {
    if (typeof tool !== 'object' || tool === null || Array.isArray(tool) || typeof (tool as { type?: unknown }).type !== 'string') {
      throw new DatasetError(at, `expected "tools[${i}]" to be a tool definition {"type": "function", "function": {...}}`);
    }
  });
  return value as Record<string, unknown>[];
}
