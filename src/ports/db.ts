// The SQL port shared by the PostgreSQL and PGlite adapters: the event store, the read models and the
// projector all speak plain SQL through it, so both back ends run exactly the same statements.

export interface QueryOptions {
  /**
   * Names the statement so PostgreSQL parses and plans it once per connection, then only binds and runs it
   * (the append is measurably faster for it). One name, one text. PGlite ignores it.
   */
  readonly name?: string;
  /**
   * Prepares the statement under a name derived from its text, as `name` does: for the statements that run
   * for every batch (planning was most of their time). Only for texts drawn from a fixed set, since each
   * stays prepared on every connection it ran on. A changed search_path (a rebuild's shadow tables) makes
   * PostgreSQL analyse and plan a prepared statement again (PREPARE, since 9.3), so projection SQL may use it.
   * Its columns must not depend on a table's definition (no `*`): a table changed under a prepared statement
   * would fail it with "cached plan must not change result type".
   */
  readonly prepare?: boolean;
  /**
   * The statement only reads (it writes nothing, has no side effect): a projector may send it ahead, with its
   * transaction's first statements, when it can guess the batch the projection will be given.
   */
  readonly readOnly?: boolean;
}

/** QueryOptions for a statement prepared once per connection. */
export const PREPARED: QueryOptions = { prepare: true };

/** PREPARED, for a read that may be sent ahead (readOnly). */
export const PREPARED_READ: QueryOptions = { prepare: true, readOnly: true };

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

/** A statement with its parameters, for a transaction's opening. */
export interface Statement {
  readonly sql: string;
  readonly params?: readonly unknown[];
  readonly options?: QueryOptions;
}

export interface TransactionOptions {
  /**
   * Statements to run first, right after BEGIN, sent without waiting (each takes a snapshot of its own): fn is
   * called at once and given the rows of the last of them as a promise, so that the statements it runs before
   * waiting for them go out in the same round trip. An opening that fails fails the transaction, whether fn
   * waited for it or not.
   */
  readonly opening?: readonly Statement[];
}

export interface Transaction extends Queryable {
  /**
   * Runs a statement whose result fn does not need: sent at once, after the statements before it and before
   * those after it, and not waited for. Its failure fails the transaction: nothing commits and `transaction`
   * rejects with that error, whatever fn returned. PostgreSQL gets the statements sent this way in one turn of
   * the event loop, and the commit, in one round trip.
   */
  send(sql: string, params?: readonly unknown[], options?: QueryOptions): void;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs fn in one transaction: committed when fn resolves and every statement it sent succeeded, rolled back
   * otherwise.
   */
  transaction<T>(fn: (tx: Transaction, opened: Promise<Record<string, unknown>[]>) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Calls onNotify with each NOTIFY's payload on channel until the returned function is called. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * Takes the named session-level advisory lock on a connection of its own, if nobody holds it: the lease
   * lasts as long as that connection (a process that dies releases it). Null when another holds it.
   */
  tryLease(name: string): Promise<Lease | null>;
  close(): Promise<void>;
}
