import { replicaName } from './replica-header.js';

/*
 * NVIDIA Dynamo's frontend names the worker that served a request in the response, not in a header: a top-level
 * `nvext.worker_id` object, `{prefill_worker_id, prefill_dp_rank, decode_worker_id, decode_dp_rank}`, when the request
 * asked for it with `nvext.extra_fields: ["worker_id"]` (ai-dynamo/dynamo `docs/pages/components/frontend/nvext.md`).
 * The frontend puts it on the stream chunk made from the engine output that carries it (the first one its router
 * yields: `lib/bindings/python/rust/llm/kv.rs`, `inject_worker_id_from_tracker`; the chunk is built in
 * `lib/llm/src/protocols/openai/chat_completions/delta.rs`), or on a whole body. docs/ENGINES.md, "Replica headers".
 */

/** The `nvext` a request carries to ask Dynamo for its worker ids, merged into what --extra-body gives. */
export function withWorkerIdAsked(extraBody: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const nvext = extraBody?.nvext;
  const given = nvext !== null && typeof nvext === 'object' && !Array.isArray(nvext) ? (nvext as Record<string, unknown>) : {};
  const fields = Array.isArray(given.extra_fields) ? given.extra_fields : [];
  return { ...extraBody, nvext: { ...given, extra_fields: fields.includes('worker_id') ? fields : [...fields, 'worker_id'] } };
}

/**
 * An id's digits in the raw text: the quoted key, a colon, a number. Never inside a string, an answer's text for one:
 * there its quotes are escaped (`\"`). The number must also be the parsed one (dynamoWorkerOf).
 */
const ID_DIGITS = { prefill: /"prefill_worker_id"\s*:\s*(\d{1,20})/, decode: /"decode_worker_id"\s*:\s*(\d{1,20})/ } as const;

/**
 * The replica a Dynamo response names: its prefill worker (where the prompt was looked up in a prefix cache and
 * computed), else its decode worker, with its data-parallel rank when it gives one (each rank keeps a KV cache of its
 * own), e.g. `7587888612384221 dp 0`. The ids are u64 (etcd lease ids, past 2^53), so the name takes the digits the
 * text `raw` carries rather than the double JSON.parse made of them. Bounded and escaped as a header's value is.
 * Undefined when `nvext` names no worker.
 */
export function dynamoWorkerOf(nvext: unknown, raw: string): string | undefined {
  if (nvext === null || typeof nvext !== 'object') return undefined;
  const info = (nvext as { worker_id?: unknown }).worker_id;
  if (info === null || typeof info !== 'object') return undefined;
  const fields = info as Record<string, unknown>;
  for (const role of ['prefill', 'decode'] as const) {
    const id = fields[`${role}_worker_id`];
    if (typeof id !== 'number' || !Number.isInteger(id) || id <= 0) continue; // 0: none (timing.rs, NO_WORKER_ID)
    const digits = ID_DIGITS[role].exec(raw)?.[1];
    const name = digits !== undefined && Number(digits) === id ? digits : String(id);
    const rank = fields[`${role}_dp_rank`];
    return replicaName(typeof rank === 'number' && Number.isInteger(rank) && rank >= 0 ? `${name} dp ${rank}` : name);
  }
  return undefined;
}
