// Benchmark: what the expected-cache model's per-replica caches (issue #31, part 3) cost per request.
// Workload: CONVERSATIONS conversations x TURNS turns through ExpectedCache (begin, the replica's name, first token,
// end), as bench/model-workload.ts drives it (a 500-token shared system prompt, ~60-token turns, 64 conversations
// interleaved), run twice in this process: once with no replica named (the baseline: one ideal cache), once with each
// conversation's turns sent to the next replica in turn over REPLICAS replicas (one cache each beside the ideal one). Figures: the mean µs of the
// model's work per request in each (and with sticky sessions), their ratio, and the loss to routing the second run measured.
// Usage: node --import tsx bench/replica-caches.ts [conversations=2000] [turns=20] [replicas=4]
import Table from 'cli-table3';
import { ExpectedCache } from '../src/cache-model/expected-cache.js';
import { defaultTokenCounter } from '../src/tokenizer/index.js';
import { driveModel } from './model-workload.js';

const CONVERSATIONS = Number(process.argv[2] ?? 2_000);
const TURNS = Number(process.argv[3] ?? 20);
const REPLICAS = Number(process.argv[4] ?? 4);
const CONCURRENT = 64;

/**
 * One pass; `replicas` 0 names none. `sticky`: each conversation stays on one replica, else each turn goes to the next.
 * Mean µs per request, and the one-cache and per-replica sums.
 */
async function pass(replicas: number, sticky = false): Promise<{ us: number; one: number; per: number }> {
  const model = new ExpectedCache(defaultTokenCounter, { blockSize: 16 });
  let sent = 0;
  let totalUs = 0;
  let one = 0;
  let per = 0;
  const route = replicas > 0 ? (id: number, turn: number): string => `replica-${(id + (sticky ? 0 : turn)) % replicas}` : undefined;
  await driveModel(model, { conversations: CONVERSATIONS, turns: TURNS, concurrent: CONCURRENT, route }, ({ ticket, us }) => {
    totalUs += us;
    sent++;
    one += ticket.hit.expected;
    per += ticket.hit.perReplica ?? 0;
  });
  return { us: totalUs / sent, one, per };
}

await pass(0); // warm the JIT and the tokenizer
const baseline = await pass(0);
const routed = await pass(REPLICAS);
const kept = await pass(REPLICAS, true);
const table = new Table({ head: ['figure', 'value'], style: { head: [], border: [] } });
table.push(
  ['requests', `${CONVERSATIONS} x ${TURNS}, ${CONCURRENT} conversations at a time`],
  ['per request, one ideal cache (baseline)', `${baseline.us.toFixed(1)} µs`],
  [`per request, with ${REPLICAS} replica caches (each turn to the next)`, `${routed.us.toFixed(1)} µs (ratio ${(routed.us / baseline.us).toFixed(2)})`],
  [`per request, with ${REPLICAS} replica caches (sticky)`, `${kept.us.toFixed(1)} µs (ratio ${(kept.us / baseline.us).toFixed(2)})`],
  ['lost to routing', `${(((routed.one - routed.per) / routed.one) * 100).toFixed(1)}% of ${routed.one.toLocaleString('en')} expected tokens`],
);
console.log(table.toString());
