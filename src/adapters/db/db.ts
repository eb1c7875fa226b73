// The SQL port shared by the PostgreSQL and PGlite adapters: the event store, the read models and the
// projector all speak plain SQL through it, so both back ends run exactly the same statements.

export interface QueryOptions {
  /**
   * Names the statement so PostgreSQL parses and plans it once per connection, then only binds and runs it
   * (the append is measurably faster for it). Only for a fixed text that never runs under a changed
   * search_path: a prepared plan keeps the search_path it was prepared with, so never for projection SQL,
   * which a rebuild points at its shadow tables. PGlite ignores it.
   */
  readonly name?: string;
}

export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<{ rows: Row[] }>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Lease {
  /** Resolves when the lease is gone: released, or its connection lost. */
  readonly lost: Promise<void>;
  release(): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs fn in one transaction: committed when fn resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Calls onNotify for each NOTIFY on channel until the returned function is called. */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  /**
   * Takes the named session-level advisory lock on a connection of its own, if nobody holds it: the lease
   * lasts as long as that connection (a process that dies releases it). Null when another holds it.
   */
  tryLease(name: string): Promise<Lease | null>;
  close(): Promise<void>;
}
