// Engine quirk: reasoning models behind vLLM (`--reasoning-parser`, e.g. DeepSeek-R1, Qwen3) and SGLang stream the
// thinking apart from the answer, in `delta.reasoning_content` (vLLM < 0.10, SGLang) or `delta.reasoning` (newer
// vLLM), and report it inside the completion count: `usage.completion_tokens_details.reasoning_tokens`. Clients do
// not send the reasoning back in the history, so a prefix cache cannot hold it for the next turn.
import { chunkJson, sseEvent, startScriptedServer, MODELS_RESPONSE, type TestServer } from './scripted-server.js';

/** Reasoning and answer tokens of every reply, and the prompt size the server reports. */
export interface ReasoningReply {
  reasoningWords: number;
  answerWords: number;
  /** Which delta field carries the reasoning. */
  field: 'reasoning_content' | 'reasoning';
}

/** Starts a scripted reasoning-model server; each chat reply streams reasoning words, then answer words, then usage. */
export function startReasoningServer(reply: ReasoningReply): Promise<TestServer> {
  return startScriptedServer((request) => {
    if (request.method === 'GET') return MODELS_RESPONSE;
    const promptTokens = 50;
    const thinking: string[] = [];
    for (let i = 0; i < reply.reasoningWords; i++) thinking.push(sseEvent(chunkJson({ [reply.field]: i === 0 ? 'hmm' : ' hmm' })));
    // The answer comes after the thinking, in a later read: its first token is later than the first token.
    const events: string[] = [];
    for (let i = 0; i < reply.answerWords; i++) events.push(sseEvent(chunkJson({ content: i === 0 ? 'yes' : ' yes' }, i === reply.answerWords - 1 ? 'stop' : null)));
    const completion = reply.reasoningWords + reply.answerWords;
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completion,
      total_tokens: promptTokens + completion,
      completion_tokens_details: { reasoning_tokens: reply.reasoningWords },
    };
    events.push(sseEvent({ id: 'chatcmpl-test', object: 'chat.completion.chunk', choices: [], usage }), sseEvent('[DONE]'));
    return { actions: [{ write: thinking.join('') }, { write: events.join(''), delayMs: 15 }, { end: true }] };
  });
}
