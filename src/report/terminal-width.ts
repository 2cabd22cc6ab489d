/**
 * The width to fit output to: a terminal's columns, else COLUMNS when set to a whole number (e.g. `COLUMNS=80
 * chatload run … | less`), else none (a file or a pipe gets the tables whole).
 */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (stream.isTTY === true && typeof stream.columns === 'number' && stream.columns > 0) return stream.columns;
  const columns = env.COLUMNS;
  return columns !== undefined && /^\d{1,4}$/.test(columns) && Number(columns) >= 20 ? Number(columns) : undefined;
}
