// One HTTP POST to a notification receiver, within a time bound, turned into how the attempt went: a 2xx is
// delivered, anything else (another status, a refused connection, a timeout) is a failure to retry.
import type { SendResult } from '../../notify/channels.ts';

/** How long a receiver may take to answer. */
export const SEND_TIMEOUT_MS = 10_000;

export async function post(url: string, headers: Record<string, string>, body: string, timeoutMs = SEND_TIMEOUT_MS): Promise<SendResult> {
  try {
    const res = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text().catch(() => '');
    if (res.ok) return { ok: true, status: res.status, error: null };
    return { ok: false, status: res.status, error: `HTTP ${res.status}${text === '' ? '' : `: ${text.replace(/\s+/g, ' ').slice(0, 200)}`}` };
  } catch (error) {
    return { ok: false, status: null, error: reasonOf(error) };
  }
}

/** A failed fetch's cause in words (fetch itself only says "fetch failed"). */
function reasonOf(error: unknown): string {
  if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `no answer within ${SEND_TIMEOUT_MS} ms`;
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  const text = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return text.slice(0, 300);
}
