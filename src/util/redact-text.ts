/** The mark that stands for a secret in every output: error messages, results.json, URLs shown, terminal lines. */
export const REDACTED = '[redacted]';

/**
 * `text` with every occurrence of each non-empty `secrets` entry (an api key, a header value, a URL's credentials)
 * replaced by REDACTED, in one pass, longest secret first (so a secret that contains another goes whole, and a mark
 * is never searched again). The one function that removes known secret strings from text; store/redact.ts's
 * redactSecrets finds secrets in structured values by their key names, and uses the same mark.
 */
export function redactText(text: string, secrets: readonly string[]): string {
  const known = [...new Set(secrets)].filter((secret) => secret.length > 0 && text.includes(secret));
  if (known.length === 0) return text;
  known.sort((a, b) => b.length - a.length);
  return text.replace(new RegExp(known.map(escapeRegExp).join('|'), 'g'), REDACTED);
}

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Shortest secret string worth redacting: shorter ones would blank out ordinary words. */
const MIN_SECRET_CHARS = 6;

/**
 * The strings a header's value may leak as (issue #35): any header may carry a credential, and a server that echoes
 * one quotes it raw, without its scheme (`Bearer T`, `Basic T`, `Token T`: just T), or base64-encoded; a Basic
 * token's decoded `user:password`, and its password, are secrets too. Shorter than 6 characters: none.
 */
export function headerSecrets(value: string): string[] {
  const out = new Set<string>([value]);
  const token = /^\s*[A-Za-z][\w-]*\s+(\S.*)$/.exec(value)?.[1]?.trim();
  if (token !== undefined) out.add(token);
  for (const credential of [...out]) {
    out.add(Buffer.from(credential, 'utf8').toString('base64'));
    // A base64 credential (Basic auth) decoded: `user:password` and the password alone.
    if (/^[A-Za-z0-9+/]{8,}={0,2}$/.test(credential)) {
      const decoded = Buffer.from(credential, 'base64').toString('utf8');
      if (/^[\x20-\x7e]+$/.test(decoded) && decoded.includes(':')) {
        out.add(decoded);
        out.add(decoded.slice(decoded.indexOf(':') + 1));
      }
    }
  }
  return [...out].filter((secret) => secret.length >= MIN_SECRET_CHARS);
}
