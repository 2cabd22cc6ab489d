import { readdirSync } from 'node:fs';
import { join, parse, resolve, sep } from 'node:path';

/** True when `path` holds a wildcard (`*`, `?` or `[...]`) that folderGlob expands. */
export function hasWildcard(path: string): boolean {
  return /[*?[]/.test(path);
}

/**
 * A path segment's pattern as a RegExp, as the shell reads it: `*` any run of characters, `?` one, `[abc]`, `[a-z]`
 * and `[!abc]` a class; every other character stands for itself. Like the shell, a wildcard does not match a name's
 * leading dot (`shard-*` never matches `.shard-x`; `.*` does).
 */
function segmentRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '[' && pattern.indexOf(']', i + 2) > i) {
      const end = pattern.indexOf(']', i + 2);
      const body = pattern.slice(i + 1, end);
      out += `[${body.startsWith('!') ? `^${escapeClass(body.slice(1))}` : escapeClass(body)}]`;
      i = end;
    } else out += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${pattern.startsWith('.') ? '' : '(?!\\.)'}${out}$`, 's');
}

/** A class body with the characters a RegExp class reads specially (but `-`, a range) escaped. */
function escapeClass(body: string): string {
  return body.replace(/[\\\]^]/g, '\\$&');
}

/**
 * The folders that match `pattern`, sorted by name (a shell's order), wildcards allowed in any segment; [] when none
 * does. Only folders are returned; unreadable folders on the way match nothing. Read anew at each call: a folder
 * made since the last call is found.
 */
export function folderGlob(pattern: string): string[] {
  const absolute = resolve(pattern);
  const { root } = parse(absolute);
  let found = [root];
  for (const segment of absolute.slice(root.length).split(sep).filter((s) => s !== '')) {
    const next: string[] = [];
    for (const base of found) {
      if (!hasWildcard(segment)) {
        next.push(join(base, segment));
        continue;
      }
      const re = segmentRegExp(segment);
      for (const entry of listFolders(base) ?? []) if (re.test(entry)) next.push(join(base, entry));
    }
    found = next;
  }
  return found.filter((path) => listFolders(path) !== undefined).sort();
}

/** The names of the folders in `dir` (symlinks to folders too), or undefined when `dir` is no readable folder. */
function listFolders(dir: string): string[] | undefined {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.isSymbolicLink())
      .map((e) => e.name);
  } catch {
    return undefined;
  }
}
