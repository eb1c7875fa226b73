// Polls until a probe answers (not undefined), or fails naming what it waited for.
export async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
