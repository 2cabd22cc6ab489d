import { createHash } from 'node:crypto';

/** RFC 4122's URL namespace (Python's uuid.NAMESPACE_URL). */
export const UUID_NAMESPACE_URL = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

/**
 * A name-based UUID, version 5 (RFC 4122 §4.3: SHA-1 of the namespace's 16 bytes then the name's UTF-8), as Python's
 * uuid.uuid5(namespace, name) gives it: llm-d-benchmark's reports name an experiment by uuid5(NAMESPACE_URL, its id).
 */
export function uuid5(namespace: string, name: string): string {
  const hash = createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex')).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
