import type { LoadPlan } from '../../options/run-plan.js';
import { Rng } from '../../util/rng.js';
import type { ActiveConversation } from '../active-conversation.js';
import { offsetOf, shareOf } from '../partition.js';
import { sleep } from '../sleep.js';
import { takeTurn, type TurnContext } from '../turn.js';
import type { WorkPool } from '../work-pool.js';
import { counted } from '../../util/plural.js';
import type { CrashHandler, Executor, ExecutorContext, PartShare } from './executor.js';
import { settle } from './settle.js';

/**
 * `fixed-clients`: the reference's closed loop (-p/-k). N clients, each with one request in flight, each
 * interleaving its share of the active conversations. Conversations come from the shared WorkPool as clients
 * need them; the -n budget is shared, so the total is exact.
 */
export interface FixedClientsConfig {
  numClients: number;
  /** Active conversations across all clients (-k); spread so that no remainder is lost. */
  maxActiveConversations: number;
  sampling: 'round_robin' | 'random';
  /** Per-client mean request rate (req/s), 0 for none. */
  requestRate: number;
  /**
   * Early stop: stop every client when the first one runs out of work. With an -n budget (`untilBudget`) early stop
   * waits for it instead: a client out of work stops, the others go on until -n requests are sent or the work is
   * done, so -n is exact whenever the dataset holds that many requests (docs/LOAD-MODELS.md).
   */
  earlyStop: boolean;
  /** -n was given: early stop waits for the budget (see earlyStop). */
  untilBudget?: boolean;
  seed: number;
  /** Global id of this part's first client (worker threads and shards number clients across the whole run). */
  clientIdOffset?: number;
}

/** Active conversations of client `clientId`: k/p each, the first k%p clients one more. */
export function activeShare(clientId: number, config: FixedClientsConfig): number {
  const base = Math.floor(config.maxActiveConversations / config.numClients);
  return base + (clientId < config.maxActiveConversations % config.numClients ? 1 : 0);
}

/** This part's share of the plan's closed loop: -p and -k split between parts, the seed shared. */
function configFor(load: LoadPlan, part: PartShare, conversations: number): FixedClientsConfig {
  if (load.model.type !== 'fixed-clients') throw new Error(`fixed-clients made from a ${load.model.type} plan`);
  const model = load.model;
  const numClients = shareOf(model.numClients, part.index, part.count);
  // -k split like -p, and never more than this part's conversations (but at least one per client).
  const active = Math.max(numClients, Math.min(shareOf(model.maxActiveConversations, part.index, part.count), conversations));
  return {
    numClients,
    maxActiveConversations: active,
    sampling: model.sampling,
    requestRate: model.requestRatePerSec,
    earlyStop: model.earlyStop,
    untilBudget: load.maxNumRequests !== undefined,
    seed: load.seed,
    clientIdOffset: offsetOf(model.numClients, part.index, part.count),
  };
}

function validate(config: FixedClientsConfig): string[] {
  const problems: string[] = [];
  if (!Number.isInteger(config.numClients) || config.numClients < 1) problems.push(`numClients: expected a whole number >= 1, got ${config.numClients}`);
  if (!(config.maxActiveConversations >= config.numClients)) problems.push(`maxActiveConversations: expected at least numClients (${config.numClients}), got ${config.maxActiveConversations}`);
  if (!(config.requestRate >= 0) || !Number.isFinite(config.requestRate)) problems.push(`requestRate: expected a finite number >= 0, got ${config.requestRate}`);
  return problems;
}

/** One line describing the load model, for logs and results. */
function describe(config: FixedClientsConfig): string {
  const rate = config.requestRate > 0 ? `, ${config.requestRate} req/s per client` : '';
  return `fixed-clients: ${counted(config.numClients, 'client')}, ${counted(config.maxActiveConversations, 'active conversation')}, ${config.sampling}${rate}`;
}

/** Fewer conversations than clients: some clients have no work (and early stop may end the run at once). */
function startWarnings(config: FixedClientsConfig, conversations: number): string[] {
  if (conversations >= config.numClients) return [];
  const earlyStop = config.earlyStop && config.untilBudget !== true ? ' and early stop ends the run at once (use --no-early-stop)' : '';
  return [`only ${counted(conversations, 'conversation')} for ${counted(config.numClients, 'client')}: some clients have no work${earlyStop}`];
}

/** The closed loop as an executor (registry.ts). */
export const fixedClients: Executor<FixedClientsConfig> = { configFor, validate, describe, startWarnings, run: runFixedClients };

/** When the first client ran out of work while early stop waited for -n: the requests sent by then. */
interface BudgetTail {
  firstIdleAt?: number;
}

/** A client ran out of conversations: early stop ends the run, or, waiting for -n, notes when the tail began. */
function outOfWork(config: FixedClientsConfig, ctx: TurnContext, pool: WorkPool, tail: BudgetTail): void {
  if (!config.earlyStop) return;
  if (config.untilBudget === true) tail.firstIdleAt ??= pool.requestsTaken;
  else ctx.stop.stop('out_of_work');
}

async function runClient(localId: number, config: FixedClientsConfig, ctx: TurnContext, pool: WorkPool, onCrash: CrashHandler, tail: BudgetTail): Promise<void> {
  const clientId = (config.clientIdOffset ?? 0) + localId;
  const rng = Rng.derive(config.seed, clientId + 1);
  const share = activeShare(localId, config);
  const active: ActiveConversation[] = [];
  const stopping = ctx.stop.stopping;
  const meanGapMs = config.requestRate > 0 ? 1000 / config.requestRate : 0;
  // Pacing keeps an absolute schedule (a Poisson process), so a request's own duration is absorbed instead of
  // added to the gap: the achieved rate matches the target while the server keeps up (the reference undershoots).
  let nextSendAtMs = performance.now();

  while (!stopping.aborted) {
    while (active.length < share) {
      const next = pool.take();
      if (next === undefined) break;
      active.push(next);
    }
    if (active.length === 0) {
      outOfWork(config, ctx, pool, tail);
      return;
    }
    if (meanGapMs > 0 && !(await sleep(nextSendAtMs - performance.now(), stopping))) return;
    // Round robin takes from the front and puts an unfinished conversation at the back, as the reference does.
    const position = config.sampling === 'random' ? rng.int(0, active.length - 1) : 0;
    const conversation = active.splice(position, 1)[0]!;
    try {
      const schedule = meanGapMs > 0 ? { scheduledAtMs: nextSendAtMs, queueMs: 0 } : undefined;
      const outcome = await takeTurn(ctx, { conversation, clientId, rng, warmup: false, schedule });
      if (outcome === 'budget_spent') return;
      if (settle(pool, conversation, outcome)) active.push(conversation);
    } catch (error) {
      // A bug while handling one turn ends that conversation, not the client.
      onCrash(`session ${conversation.id} (client ${clientId})`, error);
      pool.fail(conversation);
    }
    if (meanGapMs > 0) nextSendAtMs += rng.exponential(meanGapMs);
  }
}

/** Runs the closed loop until every client stops. Resolves (never rejects) when all clients have ended. */
async function runFixedClients(config: FixedClientsConfig, { turn: ctx, pool, onCrash }: ExecutorContext): Promise<void> {
  const clients: Promise<void>[] = [];
  const tail: BudgetTail = {};
  for (let id = 0; id < config.numClients; id++) {
    // The supervisor: a client that dies of a bug is recorded; the others go on, and nothing waits on it.
    clients.push(
      runClient(id, config, ctx, pool, onCrash, tail).catch((error: unknown) => {
        onCrash(`client ${(config.clientIdOffset ?? 0) + id}`, error);
        if (config.earlyStop) ctx.stop.stop('out_of_work');
      }),
    );
  }
  await Promise.all(clients);
  const after = tail.firstIdleAt === undefined ? 0 : pool.requestsTaken - tail.firstIdleAt;
  if (after > 0 && config.numClients > 1) {
    // The tail ran at less than the run's concurrency: said, since its latencies are not those of -p clients.
    ctx.observer.onWarning?.(
      `early stop waited for -n: a client ran out of conversations after ${tail.firstIdleAt} requests, so the last ${after} ran with fewer than ${config.numClients} clients busy`,
    );
  }
}
