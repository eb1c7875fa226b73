// The classifier port: the risk verdict a command gets, answered off the caller's event loop where the adapter
// (src/adapters/classifier-pool.ts) can, so that one large command does not hold up every other request.
import type { Verdict } from '../domain/risk/index.ts';

export interface CommandClassifier {
  /** The verdict classify() gives, or a destructive one when it cannot be had within the adapter's time bound. */
  classify(command: string): Promise<Verdict>;
}
