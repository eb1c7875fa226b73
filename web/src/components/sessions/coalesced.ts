// Re-reading a view when the log moves: one read in flight at a time, and one more after it when the log moved
// meanwhile, so a burst of events (a seeding script, a busy agent) costs two reads rather than one per event.
export function coalesced(read: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const run = async () => {
    running = true;
    try {
      do {
        again = false;
        await read().catch(() => undefined);
      } while (again);
    } finally {
      running = false;
    }
  };
  return () => {
    if (running) again = true;
    else void run();
  };
}
