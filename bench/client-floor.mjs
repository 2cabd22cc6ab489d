// The client floor of bench/startup.ts (issue 17, part 4): the least a client can do to replay a multi-turn dataset.
// Plain JS on node:http with no dependency, so nothing but Node's own start-up precedes the first request. Each of
// P workers replays the conversations i, i + P, i + 2P, ... turn by turn, streaming each answer and appending it to
// the history (what chatload does), until N requests in total were sent. No files, no statistics, no output but
// one JSON line at the end.
//
//   node bench/client-floor.mjs URL DATASET.json P N
import { readFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { Agent, request } from 'node:http';
import { URL } from 'node:url';

const [baseUrl, datasetPath, clientsArg, requestsArg] = process.argv.slice(2);
const clients = Number(clientsArg);
const budget = Number(requestsArg);
const conversations = JSON.parse(readFileSync(datasetPath, 'utf8'));
const agent = new Agent({ keepAlive: true, maxSockets: clients });

/** One HTTP exchange: resolves with the status and the body, or for a stream with the concatenated delta content. */
function send(method, path, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
    const req = request(new URL(path, baseUrl), { method, agent, headers }, (res) => {
      res.setEncoding('utf8');
      let text = '';
      let content = '';
      res.on('data', (chunk) => {
        text += chunk;
        if (!body?.stream) return;
        // Server-sent events: each complete event is `data: {json}` followed by a blank line.
        let end;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const line = text.slice(0, end);
          text = text.slice(end + 2);
          if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
          const delta = JSON.parse(line.slice(6)).choices?.[0]?.delta?.content;
          if (delta) content += delta;
        }
      });
      res.on('end', () => resolve({ status: res.statusCode, text, content }));
      res.on('error', reject);
    });
    req.setTimeout(120_000, () => req.destroy(new Error(`${method} ${path}: no answer in 120 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

const models = await send('GET', '/v1/models');
const model = JSON.parse(models.text).data[0].id;
let sent = 0;
let failed = 0;

async function worker(first) {
  for (let c = first; c < conversations.length; c += clients) {
    const history = [];
    for (const message of conversations[c].messages) {
      if (message.role !== 'user') continue;
      if (sent >= budget) return;
      sent += 1;
      history.push({ role: 'user', content: message.content });
      const answer = await send('POST', '/v1/chat/completions', { model, messages: history, stream: true, stream_options: { include_usage: true } });
      if (answer.status !== 200) {
        failed += 1;
        break; // as chatload does without retries: a failed turn ends its conversation
      }
      history.push({ role: 'assistant', content: answer.content });
    }
  }
}

await Promise.all(Array.from({ length: clients }, (_, i) => worker(i)));
agent.destroy();
process.stdout.write(`${JSON.stringify({ sent, failed })}\n`);
