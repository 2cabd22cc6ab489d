import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors/index.js';

/** `./chatload-results/<UTC timestamp>/`, e.g. chatload-results/2026-11-30T09-33-26Z. */
export function defaultOutputDir(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  return join('chatload-results', stamp);
}

/** Creates the output folder (and its parents) and returns it as given; a one-line ConfigError when it cannot. */
export function prepareOutputDir(dir: string): string {
  try {
    mkdirSync(resolve(dir), { recursive: true });
  } catch (error) {
    throw new ConfigError(`--output-dir ${dir}: cannot create the folder (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  return dir;
}
