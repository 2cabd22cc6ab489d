/**
 * Text from a server or a dataset made safe for a terminal (issue #35): every control character but newline and tab
 * (C0, DEL, C1: escape sequences that retitle a window, clear the screen or recolour it, NUL, carriage returns that
 * overwrite a line) shown as `\xNN`. chatload's own text has none, so the escaped text reads the same otherwise.
 */
export function escapeControl(text: string): string {
  return CONTROL.test(text) ? text.replace(CONTROL_ALL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`) : text;
}

// eslint-disable-next-line no-control-regex -- control characters are what these match
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex -- control characters are what these match
const CONTROL_ALL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

// eslint-disable-next-line no-control-regex -- control characters are what this matches
const HEADER_CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/**
 * Whether a header value holds a control character other than tab (a line break, as `$(cat keyfile)` leaves one, NUL,
 * DEL): HTTP forbids them in a field value, and undici refuses such a header on every request (issue #34).
 */
export function holdsHeaderControl(value: string): boolean {
  return HEADER_CONTROL.test(value);
}
