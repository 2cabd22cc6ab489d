import { Argument, type Command } from 'commander';
import { ConfigError } from '../errors/index.js';
import { SCHEMA_FILES, schemaText, type SchemaName } from '../store/schema-files.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';

const NAMES = Object.keys(SCHEMA_FILES) as SchemaName[];

/**
 * Adds `chatload schema results|record`: prints the published JSON Schema (draft-07) of results.json, or of one
 * requests.jsonl record, as the package ships it (schema/*.schema.json, generated from the types by `npm run schema`).
 */
export function registerSchemaCommand(program: Command): void {
  program
    .command('schema')
    .description(COMMAND_DESCRIPTIONS.schema)
    .addHelpText('after', examplesText('schema'))
    .addArgument(new Argument('<name>', 'results (results.json) or record (one line of requests.jsonl)').choices(NAMES))
    .action((name: string) => {
      // commander refuses other words already; this keeps the error one line if it is ever called directly.
      if (!(NAMES as string[]).includes(name)) throw new ConfigError(`schema: expected ${NAMES.join(' or ')}, got ${JSON.stringify(name)}`);
      process.stdout.write(schemaText(name as SchemaName));
    });
}
