// Benchmark: what following llama.cpp's slots and prompt cache costs the expected-cache index per request
// (src/cache-model/llamacpp-slots.ts), against the same index without them, in the same process, alternating.
// Workload: CONVERSATIONS conversations x TURNS turns on the index with llama.cpp's semantics (1-token blocks, shared
// at a request's end), CLIENTS requests in flight on SLOTS slots; a 500-token system prompt shared by all, 150 new
// tokens a turn and 100-token answers (chained keys: numbers unique past the shared part). Each request is sent
// (sentSteps), ended (endSteps) and accounted, as a run does. The model's prompt cache keeps every entry, so it grows
// with the conversations; a save or a restore finds its entries through the tree (llamacpp-prompt-cache.ts), and the
// per-request cost is shown by conversations to show whether it grows with them, and by turns (a turn adds 250 tokens
// to the history) to show whether it grows with the history: each request's work should be linear in what is new in it
// (its 250 tokens), not in its prompt. Conversations take turns round-robin, so a conversation's own history is among
// the oldest entries when it comes back (the worst case for a scan).
// Figures: µs of CPU per request (medians of ROUNDS), with and without the slots, and the ratio.
// Usage: node --import tsx bench/llamacpp-slots.ts [conversations=100,1000,4000] [turns=6,24] [rounds=3] [clients=8] [slots=4]
import Table from 'cli-table3';
import { CacheIndex, type ConversationNote } from '../src/cache-model/cache-index.js';
import type { IndexTicket } from '../src/cache-model/expected-cache-types.js';

const [sizes = '100,1000,4000', turnsArg = '6,24', roundsArg = '3', clientsArg = '8', slotsArg = '4'] = process.argv.slice(2);
const ROUNDS = Number(roundsArg);
const CLIENTS = Number(clientsArg);
const SLOTS = Number(slotsArg);
const SYSTEM = Array.from({ length: 500 }, (_, i) => i + 1);

function ticketOf(promptLength: number, totalBlocks: number): IndexTicket {
  return { hit: { expected: 0, infinite: 0 }, promptLength, totalBlocks, atSend: 0, seen: 0, inFlight: [], smaller: undefined, slotHit: undefined, slotHitUnified: undefined, ids: [], leases: [], replica: undefined, lookedUp: false };
}

function drain(steps: Generator<unknown, unknown, unknown>): void {
  for (const _ of steps);
}

/** CPU µs per request of the whole workload on a fresh index. */
function runOnce(conversations: number, turns: number, slots: number | undefined): number {
  const index = new CacheIndex({ blockSize: 1, sharedFrom: 'end', slots });
  let next = 1e9;
  const states = Array.from({ length: conversations }, () => ({ keys: SYSTEM.slice(), known: 0, turn: 0, note: {} as ConversationNote }));
  const inFlight: Array<{ c: number; ticket: IndexTicket }> = [];
  // Conversations ready for their next turn, in order; one ends its turn before it is ready again.
  const ready = Array.from({ length: conversations }, (_, c) => c);
  let requests = 0;
  const start = process.cpuUsage();
  while (ready.length > 0 || inFlight.length > 0) {
    if (ready.length > 0 && inFlight.length < CLIENTS) {
      const c = ready.shift()!;
      const s = states[c]!;
      for (let i = 0; i < 150; i++) s.keys.push(next++);
      const ticket = ticketOf(s.keys.length, s.keys.length + 100);
      drain(index.sentSteps(ticket, { keys: s.keys, known: s.known, note: s.note }, 0));
      inFlight.push({ c, ticket });
      continue;
    }
    const { c, ticket } = inFlight.shift()!;
    const s = states[c]!;
    for (let i = 0; i < 100; i++) s.keys.push(next++);
    drain(index.endSteps(ticket, s.keys, s.keys.length, 0, s.note));
    index.account(ticket, ticket.slotHit ?? 0, undefined);
    s.known = s.keys.length;
    requests++;
    if (++s.turn < turns) ready.push(c);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / requests;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const table = new Table({ head: ['conversations', 'turns', 'last prompt, tokens', 'requests', 'without slots µs/req', 'with slots µs/req', 'ratio'] });
for (const turns of turnsArg.split(',').map(Number)) {
  for (const conversations of sizes.split(',').map(Number)) {
    const without: number[] = [];
    const withSlots: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      without.push(runOnce(conversations, turns, undefined));
      withSlots.push(runOnce(conversations, turns, SLOTS));
    }
    const a = median(without);
    const b = median(withSlots);
    table.push([conversations, turns, SYSTEM.length + turns * 250 - 100, conversations * turns, a.toFixed(1), b.toFixed(1), `${(b / a).toFixed(2)}x`]);
  }
}
console.log(`llama.cpp's slots in the expected-cache index: ${SLOTS} slots, ${CLIENTS} in flight, medians of ${ROUNDS} alternating rounds`);
console.log(table.toString());
