// Engine behaviour: OpenAI-compatible servers with tool calling (OpenAI, vLLM with --enable-auto-tool-choice and a
// --tool-call-parser, SGLang with --tool-call-parser) stream a call as chat.completion.chunk deltas: the first delta
// of each call carries `index`, `id`, `type: "function"` and `function.name` with empty arguments, then
// `function.arguments` arrives in fragments over later chunks; the last chunk has `finish_reason: "tool_calls"`, and
// the usage chunk follows. This server follows a marker in the last message of the request: `CALL n` answers with n
// parallel calls (ids are the server's own, `srv_<request>_<i>`), anything else with text.
import { chunkJson, sseEvent, startScriptedServer, MODELS_RESPONSE, usageChunkJson, type RecordedRequest, type TestServer } from './scripted-server.js';

/** A chat request as the server parsed it. */
export interface ParsedToolRequest {
  messages: Array<{ role: string; content: unknown; tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
  tools?: unknown[];
}

/** Parses a recorded POST's body. */
export function parsedBody(request: RecordedRequest): ParsedToolRequest {
  return JSON.parse(request.body) as ParsedToolRequest;
}

/** Starts the server; each reply waits `delayMs` before its first byte, so concurrent requests overlap. */
export function startToolCallServer(options: { delayMs?: number } = {}): Promise<TestServer> {
  let n = 0;
  return startScriptedServer((request) => {
    if (request.method === 'GET') return MODELS_RESPONSE;
    const body = parsedBody(request);
    const last = body.messages.at(-1);
    const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
    const calls = Number(/CALL (\d+)/.exec(text)?.[1] ?? 0);
    const id = n++;
    const events: string[] = [];
    if (calls === 0) {
      events.push(sseEvent(chunkJson({ role: 'assistant', content: 'done' })), sseEvent(chunkJson({ content: ' here' }, 'stop')));
    } else {
      for (let i = 0; i < calls; i++) {
        events.push(sseEvent(chunkJson({ tool_calls: [{ index: i, id: `srv_${id}_${i}`, type: 'function', function: { name: 'run', arguments: '' } }] })));
        for (const fragment of ['{"cm', 'd": "t', `est ${i}"}`]) events.push(sseEvent(chunkJson({ tool_calls: [{ index: i, function: { arguments: fragment } }] })));
      }
      events.push(sseEvent(chunkJson({}, 'tool_calls')));
    }
    events.push(sseEvent(usageChunkJson(100 + 10 * body.messages.length, 8)), sseEvent('[DONE]'));
    return { actions: [{ write: events.join(''), delayMs: options.delayMs ?? 0 }, { end: true }] };
  });
}
