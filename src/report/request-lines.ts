import type { RequestRecord } from '../metrics/record.js';

/** -v's line for one ended request: its timings, or its error. */
export function requestLine(record: RequestRecord): string {
  const what = record.status === 'ok' ? `ttft ${record.ttft_ms} ms, e2el ${record.e2el_ms} ms, ${record.output_num_tokens} tokens` : `${record.error_kind}: ${record.error}`;
  return `${record.conversation_id} turn ${record.turn} (client ${record.client_id}${record.warmup ? ', warmup' : ''}): ${what}\n`;
}

/** --print-content's text for one answered turn. */
export function contentText(event: { conversationId: string; turn: number; user: string; answer: string }): string {
  return `--- ${event.conversationId} turn ${event.turn}\nuser: ${event.user}\nassistant: ${event.answer}\n`;
}
