/** A URL's embedded credentials (`http://user:password@host`), taken out of it. */
export interface UrlCredentials {
  /** The same URL without its credentials: what requests go to and what messages may show. */
  url: URL;
  /**
   * `Basic base64(user:password)`, as curl sends for credentials in a URL (user and password percent-decoded; a
   * user alone means an empty password). Undefined when the URL carries none.
   */
  authorization?: string;
  /** What an error message must never show: the password (raw and decoded), a lone user, and the Basic token. */
  secrets: string[];
}

/**
 * Takes the credentials out of `url` (a copy; `url` is not changed). Node's URL keeps `user:password@` in `href` but
 * not in `origin`; undici ignores them, so without this they were dropped silently (issue #16).
 */
export function splitUrlCredentials(url: URL): UrlCredentials {
  const bare = new URL(url.href);
  if (url.username === '' && url.password === '') return { url: bare, secrets: [] };
  bare.username = '';
  bare.password = '';
  const user = safeDecode(url.username);
  const password = safeDecode(url.password);
  const token = Buffer.from(`${user}:${password}`, 'utf8').toString('base64');
  // With a password, the user name is an identity, not a secret; a lone user name is the credential (a token as user).
  const parts = url.password === '' ? [url.username, user] : [url.password, password];
  const secrets = [...new Set([token, ...parts.filter((part) => part.length >= 3)])];
  return { url: bare, authorization: `Basic ${token}`, secrets };
}

/**
 * `text` parsed as a URL and split by {@link splitUrlCredentials}; undefined when it is not a URL.
 */
export function splitUrlTextCredentials(text: string): UrlCredentials | undefined {
  try {
    return splitUrlCredentials(new URL(text.trim()));
  } catch {
    return undefined;
  }
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    // A stray `%` that is no escape: curl sends it as it is.
    return part;
  }
}
