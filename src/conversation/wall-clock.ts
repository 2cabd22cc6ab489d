/*
 * Azure LLM inference traces' TIMESTAMP (docs/DATASETS.md): a wall-clock string, `2023-11-16 18:15:46.6805900` in the
 * 2023 release (7 fractional digits, no zone), `2024-05-10 00:00:00.009930+00:00` in the 2024 one. Read exactly, as a
 * whole day number and integer nanoseconds of that day, never through Date's millisecond rounding: times relative to a
 * trace's first row are then exact to the nanosecond for spans up to 104 days (2^53 ns).
 */

/** A parsed wall-clock time: days since 1970-01-01 (UTC) and nanoseconds into that day. */
export interface WallClock {
  day: number;
  nsOfDay: number;
}

/** How a trace wrote its times, kept to write new ones the same way: fractional digits and the zone suffix. */
export interface WallClockStyle {
  fractionDigits: number;
  /** '', 'Z', or an offset such as '+00:00' (new times are written in UTC with that suffix when it is +00:00). */
  suffix: string;
  /** 'T' or ' ' between the date and the time. */
  separator: string;
}

const NS_PER_DAY = 86_400_000_000_000;
const PATTERN = /^(\d{4})-(\d{2})-(\d{2})([ T])(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;

/** Parses `text`, or undefined when it is no such time. */
export function parseWallClock(text: string): (WallClock & { style: WallClockStyle }) | undefined {
  const m = PATTERN.exec(text);
  if (m === null) return undefined;
  const [year, month, dayOfMonth, hour, minute, second] = [m[1], m[2], m[3], m[5], m[6], m[7]].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || dayOfMonth < 1 || dayOfMonth > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  // Date.UTC of a whole day is an exact integer of ms: no rounding enters the day number.
  const day = Date.UTC(year, month - 1, dayOfMonth) / 86_400_000;
  const fraction = m[8] ?? '';
  let ns = ((hour * 60 + minute) * 60 + second) * 1e9 + Number(fraction.padEnd(9, '0') || '0');
  const suffix = m[9] ?? '';
  if (suffix !== '' && suffix !== 'Z') {
    const sign = suffix.startsWith('-') ? -1 : 1;
    const digits = suffix.slice(1).replace(':', '');
    ns -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60e9;
  }
  const carry = Math.floor(ns / NS_PER_DAY);
  return { day: day + carry, nsOfDay: ns - carry * NS_PER_DAY, style: { fractionDigits: fraction.length, suffix, separator: m[4]! } };
}

/** Nanoseconds from `from` to `to` (exact below 2^53 ns, about 104 days). */
export function nsBetween(from: WallClock, to: WallClock): number {
  return (to.day - from.day) * NS_PER_DAY + (to.nsOfDay - from.nsOfDay);
}

/** `origin` plus `ns` nanoseconds, written in `style` (in UTC: a non-zero offset is written as +00:00). */
export function formatWallClock(origin: WallClock, ns: number, style: WallClockStyle): string {
  const unit = 10 ** (9 - style.fractionDigits);
  const total = origin.nsOfDay + Math.round(ns / unit) * unit;
  const carry = Math.floor(total / NS_PER_DAY);
  const inDay = total - carry * NS_PER_DAY;
  const date = new Date((origin.day + carry) * 86_400_000).toISOString().slice(0, 10);
  const seconds = Math.floor(inDay / 1e9);
  const two = (n: number): string => String(n).padStart(2, '0');
  const clock = `${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
  const fraction = style.fractionDigits > 0 ? `.${String((inDay - seconds * 1e9) / unit).padStart(style.fractionDigits, '0')}` : '';
  const suffix = style.suffix === '' || style.suffix === 'Z' ? style.suffix : '+00:00';
  return `${date}${style.separator}${clock}${fraction}${suffix}`;
}
