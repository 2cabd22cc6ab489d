import { withToolsTurn } from './tools-prompt.js';
import type { ChatMessage, IncrementalRendering, ToolCall } from './types.js';

/**
 * A message in OpenAI's wire shape: `content` as it is (text or the list of parts), null for an assistant message
 * that only calls tools, and `tool_calls` / `tool_call_id` when set. The one place the chat shape is made: the chat
 * endpoint's request body and the dataset writer both use it.
 */
export function wireMessage(m: ChatMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: m.content === '' && m.tool_calls !== undefined ? null : m.content };
  if (m.tool_calls !== undefined) out.tool_calls = m.tool_calls;
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  if (m.reasoning_content !== undefined) out.reasoning_content = m.reasoning_content;
  return out;
}

/**
 * The text a chat template renders for a message: its text (image parts left out), then each tool call as a JSON
 * line (templates without tool support see the calls as text, so local counts include them).
 */
export function renderedText(m: ChatMessage): string {
  // A plain message is its content as it is (not copied).
  if (typeof m.content === 'string' && (m.tool_calls === undefined || m.tool_calls.length === 0)) return m.content;
  return renderedParts(m).join('');
}

/**
 * renderedText as its parts (each text part, then each tool call's line), not joined: see IncrementalRendering.
 * Appended to `parts` when given (a template's markup around them), and returned.
 */
export function renderedParts(m: ChatMessage, parts: string[] = []): string[] {
  // Index loops, not for-of: this runs per message per turn, inlined into the expected-cache model's hottest code.
  const content = m.content;
  if (typeof content === 'string') parts.push(content);
  else
    for (let i = 0; i < content.length; i++) {
      const part = content[i]!;
      if (part.type === 'text') parts.push(part.text);
    }
  const calls = m.tool_calls;
  if (calls !== undefined) for (let i = 0; i < calls.length; i++) parts.push(toolCallText(calls[i]!));
  return parts;
}

/**
 * A whole prompt as a message-by-message template renders it, as its parts, not joined: the tools' system turn (when
 * `tools` has any: tools-prompt.ts), each message's parts, then the generation prompt when it is asked for.
 */
export function promptParts(rendering: IncrementalRendering, messages: readonly ChatMessage[], tools: readonly unknown[] | undefined, addGenerationPrompt: boolean): string[] {
  const parts: string[] = [];
  for (const m of withToolsTurn(messages, tools)) parts.push(...rendering.renderParts(m));
  if (addGenerationPrompt) parts.push(rendering.generationPrompt);
  return parts;
}

function toolCallText(call: ToolCall): string {
  return `\n<tool_call>${JSON.stringify({ name: call.function.name, arguments: call.function.arguments })}</tool_call>`;
}
