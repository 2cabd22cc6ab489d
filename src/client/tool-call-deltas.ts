import type { ToolCall } from '../tokenizer/types.js';

/** One call being assembled: fields as they arrived. */
interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Assembles `choices[0].delta.tool_calls` of a chat completion stream. In OpenAI's streaming format each delta entry
 * carries an `index`; the first one of a call brings `id`, `type` and `function.name`, and `function.arguments` then
 * arrives in fragments across chunks, to be concatenated in order. Entries without `index` (seen from servers
 * that send whole calls) take their position in the array. A non-streamed `message.tool_calls` is the same with
 * each call whole.
 */
export class ToolCallDeltas {
  readonly #calls: PartialCall[] = [];

  /** Adds one delta's `tool_calls`; returns the characters of arguments it added, or -1 when it held no call. */
  add(value: unknown): number {
    if (!Array.isArray(value) || value.length === 0) return -1;
    let chars = 0;
    let any = false;
    for (let position = 0; position < value.length; position++) {
      const entry = value[position] as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } | null } | null;
      if (entry === null || typeof entry !== 'object') continue;
      any = true;
      const index = typeof entry.index === 'number' && Number.isInteger(entry.index) && entry.index >= 0 && entry.index < 1024 ? entry.index : position;
      let call = this.#calls[index];
      if (call === undefined) {
        call = { id: '', name: '', arguments: '' };
        this.#calls[index] = call;
      }
      if (typeof entry.id === 'string' && entry.id !== '') call.id = entry.id;
      const fn = entry.function;
      if (fn !== null && typeof fn === 'object') {
        if (typeof fn.name === 'string') call.name += fn.name;
        if (typeof fn.arguments === 'string') {
          call.arguments += fn.arguments;
          chars += fn.arguments.length;
        } else if (fn.arguments !== null && typeof fn.arguments === 'object') {
          // Some servers send arguments as an object in a whole (non-streamed) call.
          const text = JSON.stringify(fn.arguments);
          call.arguments += text;
          chars += text.length;
        }
      }
    }
    return any ? chars : -1;
  }

  /** The calls so far, in index order (a missing id is made from the index, so results can still answer it). */
  calls(): ToolCall[] {
    const out: ToolCall[] = [];
    this.#calls.forEach((call, index) => {
      if (call === undefined) return;
      out.push({ id: call.id === '' ? `call_${index}` : call.id, type: 'function', function: { name: call.name, arguments: call.arguments } });
    });
    return out;
  }
}
