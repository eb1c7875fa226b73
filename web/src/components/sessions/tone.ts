// Which badge colour a session's, step's or approval's state reads as, the same on every sessions view.
export type Tone = 'ok' | 'warn' | 'bad' | '';

export function outcomeTone(outcome: string | null | undefined): Tone {
  return outcome === 'success' ? 'ok' : outcome === 'partial' ? 'warn' : outcome === 'failed' ? 'bad' : '';
}

export function statusTone(status: string): Tone {
  if (['done', 'completed', 'succeeded', 'granted'].includes(status)) return 'ok';
  if (['failed', 'denied', 'expired', 'timed_out', 'refused', 'lost'].includes(status)) return 'bad';
  if (['active', 'running', 'pending', 'open', 'requested', 'awaiting_approval', 'approved'].includes(status)) return 'warn';
  return '';
}

/** A plan step's state as a checklist box. */
export const STEP_GLYPH: Record<string, string> = { done: '☑', running: '◐', failed: '☒', skipped: '⊘', replaced: '↺', pending: '☐' };
