import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chatloadPackage } from '../util/package-root.js';

/** The published JSON Schemas (draft-07), by the name `chatload schema NAME` takes. */
export const SCHEMA_FILES = {
  /** results.json (ResultsDocument). */
  results: 'schema/results.schema.json',
  /** One line of requests.jsonl (RequestRecord). */
  record: 'schema/record.schema.json',
} as const;

/** A published schema's name. */
export type SchemaName = keyof typeof SCHEMA_FILES;

/** A JSON Schema as ts-json-schema-generator writes it: the subset schema-check.ts reads. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  definitions?: Record<string, JsonSchema>;
}

/**
 * The published schema's text, read from the package (schema/ ships beside dist/, package.json `files`): the committed
 * file `npm run schema` generated, so `chatload schema` prints exactly what the package publishes.
 */
export function schemaText(name: SchemaName): string {
  const pkg = chatloadPackage();
  if (pkg === null) throw new Error(`chatload's package.json was not found above ${import.meta.url}: cannot read ${SCHEMA_FILES[name]}`);
  return readFileSync(join(pkg.root, SCHEMA_FILES[name]), 'utf8');
}

const parsed = new Map<SchemaName, JsonSchema>();

/** The published schema, parsed once. */
export function schemaOf(name: SchemaName): JsonSchema {
  let schema = parsed.get(name);
  if (schema === undefined) {
    schema = JSON.parse(schemaText(name)) as JsonSchema;
    parsed.set(name, schema);
  }
  return schema;
}
