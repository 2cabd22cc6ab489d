/** A batch of a table's rows: a Parquet row group or an Arrow record batch, its rows made one at a time on demand. */
export interface RowBatch {
  /** Rows in the batch. */
  count: number;
  /** Row `i` of the batch (0-based), an object by column name (only the columns asked for). */
  row(i: number): Record<string, unknown>;
  /** The row group's (record batch's) index in its file. */
  group: number;
  /** The file's 0-based row of the batch's first row. */
  firstRow: number;
}

/** A table file opened: its column names, and its rows batch by batch (one batch in memory at a time). */
export interface TableFile {
  readonly file: string;
  readonly columns: readonly string[];
  /** The batches in file order, with only `columns` read (all when undefined). */
  batches(columns?: readonly string[]): AsyncGenerator<RowBatch>;
  close(): Promise<void>;
}
