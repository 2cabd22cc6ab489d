/** A batch of a table's rows: a Parquet row group or an Arrow record batch. */
export interface RowBatch {
  /** The rows, objects by column name (only the columns asked for). */
  rows: Record<string, unknown>[];
  /** The row group's (record batch's) index in its file. */
  group: number;
  /** The file's 0-based row of `rows[0]`. */
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
