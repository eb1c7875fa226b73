// Serialises work per key inside one process: commands on one stream queue up instead of racing each other
// into version conflicts. Writers in other processes are still caught by the expected-version check.
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      // Forget the key once nothing else queued behind this run, so the map does not grow without bound.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
