import type { LookupFunction } from 'node:net';
// Shared bits of the client tests: a client factory that closes what it opens, and a minimal request.
import { ChatClient, type ChatClientOptions } from '../../src/client/chat-client.js';
import type { ChatRequest } from '../../src/client/types.js';
import { startScriptedServer, type ScriptedResponse, type RecordedRequest, type TestServer } from './scripted-server.js';

/** A one-message streaming request for model `test-model`. */
export function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'test-model', messages: [{ role: 'user', content: 'hi' }], stream: true, ...overrides };
}

/**
 * Starts a scripted server and a ChatClient pointed at it, runs `body`, then closes both (server first, so a stalled
 * response cannot hold the client's close).
 */
export async function withScriptedClient(
  script: ScriptedResponse | ((request: RecordedRequest, index: number) => ScriptedResponse),
  options: Partial<ChatClientOptions>,
  body: (client: ChatClient, server: TestServer) => Promise<void>,
): Promise<void> {
  const server = await startScriptedServer(script);
  const client = new ChatClient({ baseUrl: server.url, connections: 4, requestTimeoutMs: 5_000, ...options });
  try {
    await body(client, server);
  } finally {
    await server.close();
    await client.close();
  }
}

/** A host-name resolver that fails as getaddrinfo does with `code`, so DNS failures are tested without any query leaving the machine. */
export function failingLookup(code = 'ENOTFOUND'): LookupFunction {
  return (hostname, _options, callback) => {
    const error = Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code, hostname });
    process.nextTick(() => callback(error, '', 4));
  };
}
