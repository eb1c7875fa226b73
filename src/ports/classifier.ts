// The classifier port: the risk verdict a command gets (and, asked with a target and policies, what each policy
// decides for it), answered off the caller's event loop where the adapter (src/adapters/classifier-pool.ts) can,
// so that one large command does not hold up every other request.
import type { JudgeRequest, Judgement } from '../domain/policy/index.ts';
import type { Verdict } from '../domain/risk/index.ts';

export interface CommandClassifier {
  /** The verdict classify() gives, or a destructive one when it cannot be had within the adapter's time bound. */
  classify(command: string): Promise<Verdict>;
  /** The verdict and each policy's decision (and the parts, when asked) in one walk; a command not judged in time asks. */
  judge(request: JudgeRequest): Promise<Judgement>;
}
