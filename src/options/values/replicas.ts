/**
 * The simulator's replicas and router (issue #31): `chatload serve --replicas N --router KIND`, and a run's
 * `--sim-replicas`/`--sim-router` for the built-in simulator. Values of options, so they live here; the simulator
 * (src/sim/router.ts) implements the kinds.
 */

/** How the simulator's router picks a replica (docs/SIMULATOR.md, "Replicas and routers"). */
export const ROUTER_KINDS = ['round-robin', 'random', 'sticky', 'prefix'] as const;

export type RouterKind = (typeof ROUTER_KINDS)[number];

/** Most replicas one simulator runs: each has its own KV cache arrays and step loop on the one event loop. */
export const MAX_REPLICAS = 64;

/** The router when none is named: round-robin, Dynamo's frontend's default `--router-mode` (docs/ENGINES.md). */
export const DEFAULT_ROUTER: RouterKind = 'round-robin';

/** Whether `value` names a router kind. */
export function isRouterKind(value: unknown): value is RouterKind {
  return typeof value === 'string' && (ROUTER_KINDS as readonly string[]).includes(value);
}

/** The error text for a bad replica count, or null when `n` is an integer 1..MAX_REPLICAS. */
export function replicasProblem(n: number): string | null {
  return Number.isInteger(n) && n >= 1 && n <= MAX_REPLICAS ? null : `expected a whole number of replicas from 1 to ${MAX_REPLICAS}`;
}

/** The error text for a bad router kind. */
export function routerProblem(value: unknown): string | null {
  return isRouterKind(value) ? null : `expected ${ROUTER_KINDS.join(', ')}; got ${JSON.stringify(value)}`;
}
