import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** chatload's version from package.json (two levels up from both src/sim and dist/sim), or '0.0.0' if unreadable. */
export function chatloadVersion(): string {
  if (cached !== undefined) return cached;
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    cached = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    cached = '0.0.0';
  }
  return cached;
}
