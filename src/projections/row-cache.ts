// The rows a live projection's batches load, kept between batches by the process that leads it, so that a command's
// events do not read again the session row the previous command's events just wrote. A cache, never a source:
// it is of one place of the projection (its version and checkpoint), and a batch uses it only when the stored
// checkpoint is still that place. Every writer of a projection's tables moves its checkpoint in the same
// transaction (a batch, a rebuild's swap, a reset), and the rows at a place are the fold of the log up to it,
// so an unmoved checkpoint means unchanged rows. The group's transaction checks the stored place before it
// commits (a member moved meanwhile rolls the batch back), so a batch that used a stale cache never commits.
import type { Queryable, QueryOptions, Transaction } from '../ports/db.ts';

/** Rows kept per table; the oldest used go first. */
export const ROW_CACHE_LIMIT = 4_096;

/** A row as JSON text, or null: no such row. */
type Cached = string | null;

export class RowCache {
  private readonly tables = new Map<string, Map<string, Cached>>();
  /** The place the rows are of; null: none (empty). */
  private place: string | null = null;

  constructor(private readonly limit = ROW_CACHE_LIMIT) {}

  /**
   * A batch's view from `seen`: what the cache holds when it is of `seen`, nothing otherwise (it is emptied).
   * `guess`: the view of read-ahead's dry run, which is to stop where it has nothing left to read.
   */
  view(seen: string, options: { readonly guess?: boolean } = {}): RowCacheView {
    if (this.place !== seen) this.clear();
    return new RowCacheView(this.place === null ? null : this.tables, options.guess === true);
  }

  /**
   * The batch from `from` committed at `to`: the rows it loaded and wrote (its view, if it had rows to apply)
   * are now those of `to`. A cache of another place than `from` is emptied instead.
   */
  committed(from: string, to: string, view: RowCacheView | null): void {
    if (view === null && this.place !== from) {
      this.clear();
      return;
    }
    if (view !== null) {
      for (const [table, rows] of view.staged) {
        const kept = this.tables.get(table) ?? new Map<string, Cached>();
        this.tables.set(table, kept);
        for (const [key, row] of rows) {
          kept.delete(key);
          kept.set(key, row);
        }
        for (const key of kept.keys()) {
          if (kept.size <= this.limit) break;
          kept.delete(key);
        }
      }
    }
    this.place = to;
  }

  clear(): void {
    this.tables.clear();
    this.place = null;
  }
}

/** One batch's use of the cache: reads from it, and the rows the batch loads and writes, kept until it commits. */
export class RowCacheView {
  readonly staged = new Map<string, Map<string, Cached>>();

  constructor(
    private readonly kept: ReadonlyMap<string, ReadonlyMap<string, Cached>> | null,
    /** A dry run's (read-ahead.ts): a load the cache answers whole never returns, so the run goes no further. */
    readonly guess = false,
  ) {}

  /** The row as the cache has it, a fresh object (the batch may change it); null: no such row; undefined: unknown. */
  get(table: string, key: string): Record<string, unknown> | null | undefined {
    const row = this.kept?.get(table)?.get(key);
    return row === undefined ? undefined : row === null ? null : (JSON.parse(row) as Record<string, unknown>);
  }

  /** What the table holds under `key` once the batch commits: a row as JSON text, or null for none. */
  note(table: string, key: string, row: Cached): void {
    const rows = this.staged.get(table) ?? new Map<string, Cached>();
    this.staged.set(table, rows);
    rows.set(key, row);
  }
}

const views = new WeakMap<Queryable, RowCacheView>();

/** The transaction as a batch's projection is to see it, its loads going through `view`. */
export function withRowCache(tx: Transaction, view: RowCacheView): Transaction {
  const seen: Transaction = {
    query: <Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) => tx.query<Row>(sql, params, options),
    exec: (sql: string) => tx.exec(sql),
    send: (sql: string, params?: readonly unknown[], options?: QueryOptions) => tx.send(sql, params, options),
  };
  views.set(seen, view);
  return seen;
}

/** The cache view a transaction was given for its batch, if any. */
export function rowCacheOf(tx: Queryable): RowCacheView | undefined {
  return views.get(tx);
}

/** The key of a place, as the cache compares them. */
export function placeKey(place: { readonly version: number; readonly checkpoint: { readonly tx: number; readonly pos: number } }): string {
  return `${place.version}:${place.checkpoint.tx}:${place.checkpoint.pos}`;
}
