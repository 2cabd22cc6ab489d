import { chatloadPackage } from './package-root.js';

/** chatload's version, from the nearest package.json named "chatload" above this file (src/ or dist/); "unknown" if none. */
export function chatloadVersion(): string {
  return chatloadPackage()?.version ?? 'unknown';
}
