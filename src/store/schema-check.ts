import { shownValue } from '../errors/shown-value.js';
import type { JsonSchema } from './schema-files.js';

/** Where a value read back does not have its schema's type: the field's path and what was expected there. */
export interface SchemaMismatch {
  /** The field, dotted from the document's top (`summary.metrics.ttft_ms.p50`, `per_turn[2].turn`). */
  field: string;
  /** What the schema wants there and what the file holds, e.g. `expected a number or null, got "x"`. */
  problem: string;
}

/**
 * Checks the JSON types of `value` against `schema` (draft-07 as ts-json-schema-generator writes it: $ref, type,
 * properties, additionalProperties, items, anyOf, allOf, enum, const), the way a reader of an older or newer file of
 * the same major wants: a field that is present must have its type; a field that is absent, a field the schema does
 * not know and an enum value it does not list (a newer minor may add them) are not mismatches. Returns the first
 * mismatch, or undefined.
 */
export function checkShape(value: unknown, schema: JsonSchema, root: JsonSchema, field: string): SchemaMismatch | undefined {
  const s = resolved(schema, root);
  if (s.anyOf !== undefined) {
    const misses = s.anyOf.map((option) => checkShape(value, option, root, field));
    if (misses.some((m) => m === undefined)) return undefined;
    // The option of the value's own JSON type says best what is wrong inside it.
    const inside = misses.find((m) => m !== undefined && m.field !== field);
    return inside ?? { field, problem: `expected ${s.anyOf.map((o) => typeWords(resolved(o, root))).join(' or ')}, got ${shownValue(value)}` };
  }
  for (const part of s.allOf ?? []) {
    const miss = checkShape(value, part, root, field);
    if (miss !== undefined) return miss;
  }
  const types = typesOf(s);
  if (types.length > 0 && !types.includes(jsonType(value))) return { field, problem: `expected ${typeWords(s)}, got ${shownValue(value)}` };
  if (Array.isArray(value) && s.items !== undefined) {
    for (let i = 0; i < value.length; i++) {
      const miss = checkShape(value[i], s.items, root, `${field}[${i}]`);
      if (miss !== undefined) return miss;
    }
  }
  if (jsonType(value) === 'object') return checkProperties(value as Record<string, unknown>, s, root, field);
  return undefined;
}

function checkProperties(value: Record<string, unknown>, s: JsonSchema, root: JsonSchema, field: string): SchemaMismatch | undefined {
  const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
  for (const [key, child] of Object.entries(value)) {
    const known = s.properties?.[key] ?? extra;
    if (known === undefined) continue;
    const miss = checkShape(child, known, root, field === '' ? key : `${field}.${key}`);
    if (miss !== undefined) return miss;
  }
  return undefined;
}

/** The schema a `$ref` (`#/definitions/Name`) names, followed to the end. */
function resolved(schema: JsonSchema, root: JsonSchema): JsonSchema {
  let s = schema;
  for (let depth = 0; s.$ref !== undefined && depth < 32; depth++) {
    const name = decodeURIComponent(s.$ref.replace(/^#\/definitions\//, ''));
    const target = root.definitions?.[name];
    if (target === undefined) throw new Error(`schema: ${s.$ref} is not defined`);
    s = target;
  }
  return s;
}

/** The JSON types a schema allows; an enum or const allows the types of its values. Empty: any. */
function typesOf(s: JsonSchema): string[] {
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    // "integer" is a number whose value the reader does not judge.
    return types.map((t) => (t === 'integer' ? 'number' : t));
  }
  if (s.const !== undefined) return [jsonType(s.const)];
  if (s.enum !== undefined) return [...new Set(s.enum.map(jsonType))];
  if (s.properties !== undefined) return ['object'];
  return [];
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean' || typeof value === 'object' ? typeof value : 'undefined';
}

const ARTICLE: Record<string, string> = { object: 'an object', array: 'an array', number: 'a number', string: 'a string', boolean: 'true or false', null: 'null' };

function typeWords(s: JsonSchema): string {
  const types = typesOf(s);
  return types.length === 0 ? 'any value' : types.map((t) => ARTICLE[t] ?? t).join(' or ');
}
