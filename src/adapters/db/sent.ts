// The statements a transaction sent without waiting for their answers (its opening, Transaction.send, its
// closing), kept by both adapters: their first failure is the transaction's outcome.

/** PostgreSQL's "current transaction is aborted": a statement behind one that failed. */
const IN_FAILED_TRANSACTION = '25P02';

export class Sent {
  readonly #answers: Promise<unknown>[] = [];

  /** Keeps the answer (its failure is seen here, never as an unhandled rejection) and hands it back. */
  track<R>(answer: Promise<R>): Promise<R> {
    answer.catch(() => undefined);
    this.#answers.push(answer);
    return answer;
  }

  /** The first failure among the answers, in the order they were sent, once all are in; null when none failed. */
  async firstFailure(): Promise<Error | null> {
    for (const outcome of await Promise.allSettled(this.#answers)) {
      if (outcome.status === 'rejected') return outcome.reason instanceof Error ? outcome.reason : new Error(String(outcome.reason));
    }
    return null;
  }

  /**
   * The error a failed transaction reports: when fn failed only because an earlier statement it sent had
   * aborted the transaction, that statement's error, which says what went wrong.
   */
  async cause(error: unknown): Promise<unknown> {
    const code = (error as { code?: unknown } | null)?.code;
    return code === IN_FAILED_TRANSACTION ? ((await this.firstFailure()) ?? error) : error;
  }
}
