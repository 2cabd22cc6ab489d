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
