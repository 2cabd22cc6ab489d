import { Rng } from '../util/rng.js';
import type { ActiveConversation } from './active-conversation.js';
import { runTurn, type TurnContext } from './turn.js';
import type { CrashHandler } from './executors/executor.js';

/**
 * --warmup-step: sends the first turn of every conversation, with the run's number of clients, before the
 * measured phase. The records are flagged `warmup` (written, never summarized) and the answers go into the
 * history, so the measured phase starts at turn 2 with a warm cache, as in the reference. Returns the
 * conversations that still have turns left, in dataset order; `onDone` hears how each of the others ended.
 */
export async function runWarmup(
  conversations: readonly ActiveConversation[],
  ctx: TurnContext,
  numClients: number,
  seed: number,
  onDone: (conversation: ActiveConversation, ok: boolean) => void,
  onCrash: CrashHandler,
): Promise<{ remaining: ActiveConversation[]; sent: number }> {
  const ok = new Array<boolean>(conversations.length).fill(false);
  let next = 0;
  let sent = 0;
  const worker = async (clientId: number): Promise<void> => {
    const rng = Rng.derive(seed ^ 0x5741524d, clientId + 1);
    while (!ctx.stop.stopping.aborted && next < conversations.length) {
      const index = next++;
      const conversation = conversations[index]!;
      try {
        sent += 1;
        const record = await runTurn(ctx, { conversation, clientId, rng, warmup: true });
        ok[index] = record.status === 'ok';
      } catch (error) {
        onCrash(`warmup of ${conversation.id}`, error);
      }
    }
  };
  await Promise.all(Array.from({ length: numClients }, (_, id) => worker(id)));
  const remaining: ActiveConversation[] = [];
  conversations.forEach((conversation, index) => {
    if (index >= next) remaining.push(conversation); // never reached (the run stopped during warmup)
    else if (!ok[index]) onDone(conversation, false);
    else if (conversation.done) onDone(conversation, true);
    else remaining.push(conversation);
  });
  return { remaining, sent };
}
