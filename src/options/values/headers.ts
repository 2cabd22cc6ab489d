import * as z from 'zod';
import { holdsHeaderControl } from '../../util/control-chars.js';

/**
 * One `--header` line: an HTTP token as the name, then `:` or `=` (the newest reference accepts both), then the
 * value. The first `:` or `=` splits, so a value may hold either (`Authorization: Bearer abc==`).
 */
const HEADER_LINE = /^\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+\s*[:=].*$/;

/**
 * Headers that frame the message or the connection: chatload (undici) sets them per request, and a given one would
 * contradict the body it sends (`Content-Length: 5` on a 2 KB body) or the connection it manages (issue #35).
 */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'host', 'te', 'trailer', 'expect']);

/** Repeatable `--header 'Name: value'` / `'Name=value'` lines, validated and parsed into a header object (later lines win). */
export const headersSchema = z
  .array(z.string().regex(HEADER_LINE, 'expected "Name: value" or "Name=value"'))
  .transform((lines, ctx): Record<string, string> => {
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const split = line.search(/[:=]/);
      const name = line.slice(0, split).trim();
      if (FRAMING_HEADERS.has(name.toLowerCase())) {
        ctx.addIssue({ code: 'custom', message: `${name} is set by chatload for each request (it frames the message or the connection); drop it` });
        return z.NEVER;
      }
      const value = line.slice(split + 1).trim();
      if (holdsHeaderControl(value)) {
        ctx.addIssue({ code: 'custom', message: `${name}: its value holds a control character; give the value alone` });
        return z.NEVER;
      }
      headers[name] = value;
    }
    return headers;
  });
