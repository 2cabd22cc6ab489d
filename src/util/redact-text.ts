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
