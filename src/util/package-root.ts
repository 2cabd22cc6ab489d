import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** chatload's package.json fields that chatload reads about itself. */
export interface PackageInfo {
  /** The folder holding chatload's package.json (the checkout, or the installed package). */
  root: string;
  version: string;
}

let cached: PackageInfo | null | undefined;

/**
 * The nearest package.json named "chatload" above this file (src/, dist/ or dist/bundle/) and its folder; null when
 * there is none (chatload bundled into something else).
 */
export function chatloadPackage(): PackageInfo | null {
  if (cached !== undefined) return cached;
  cached = null;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'chatload' && typeof pkg.version === 'string') {
        cached = { root: dir, version: pkg.version };
        break;
      }
    } catch {
      // no package.json here: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return cached;
}
