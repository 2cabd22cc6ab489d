/**
 * Response headers that name the replica behind a router that served a request, tried in order when --replica-header
 * is not given (docs/ENGINES.md, "Routers in front of replicas", "Replica headers", cites each router's source):
 * - `x-chatload-replica`: chatload's simulator with --replicas (its router sets it on every response).
 * None of the routers read so far sends one to the client: llm-d's inference scheduler (the Gateway API Inference
 * Extension's endpoint picker) names the endpoint to the proxy only (`x-gateway-destination-endpoint`, a request
 * header, and `envoy.lb` metadata) and passes the model server's own headers back; NVIDIA Dynamo's frontend returns
 * the worker id in the body (`nvext.worker_id`, when asked with `nvext.extra_fields`), not in a header; the SGLang
 * router and the vLLM production-stack router pass the worker's headers through and add none naming it.
 */
export const KNOWN_REPLICA_HEADERS: readonly string[] = ['x-chatload-replica'];

/** The headers to read: --replica-header alone when given, else the known ones. */
export function replicaHeadersOf(replicaHeader: string | undefined): readonly string[] {
  return replicaHeader === undefined ? KNOWN_REPLICA_HEADERS : [replicaHeader.toLowerCase()];
}
