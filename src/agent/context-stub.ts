// The one line that stands in for a tool result the fitter (./context-fit.ts) elides: which call it answered,
// how it ended, how large it was, and how to read it again (get_tool_result).
import type { SessionEventOf } from '../domain/session/events.ts';
import { clip } from './context-digest.ts';

/** The arguments that say what a call was about, in order of preference. */
const KEY_ARGUMENTS = ['target', 'slug', 'execution_id', 'url', 'query', 'path', 'title', 'seq'];

const encoder = new TextEncoder();

export function elidedResultStub(requested: SessionEventOf<'ToolCallRequested'>['data'], completed: SessionEventOf<'ToolCallCompleted'>['data']): string {
  const { name, args, tool_call_id } = requested;
  const key = KEY_ARGUMENTS.find((k) => typeof args[k] === 'string' || typeof args[k] === 'number');
  const about = key === undefined ? '' : ` ${clip(String(args[key]), 80)}`;
  const bytes = completed.result_original_bytes ?? encoder.encode(completed.error ?? JSON.stringify(completed.result ?? null)).length;
  return `[elided: ${name}${about} → ${outcomeOf(completed)}, ${bytes} bytes; call get_tool_result with tool_call_id "${tool_call_id}" to read it again]`;
}

/** error, or the result's own status (and exit code, as run answers them), else ok. */
function outcomeOf({ result, error, result_original_bytes }: SessionEventOf<'ToolCallCompleted'>['data']): string {
  if (error !== null) return 'error';
  // A result cut when it was recorded is the start of its JSON text: run puts status and exit_code before the output.
  const fields: Record<string, unknown> =
    typeof result === 'string' && result_original_bytes !== null
      ? { status: /"status":"([a-z_]+)"/.exec(result)?.[1], exit_code: /"exit_code":(-?\d+)/.exec(result)?.[1] }
      : typeof result === 'object' && result !== null && !Array.isArray(result)
        ? (result as Record<string, unknown>)
        : {};
  const status = typeof fields.status === 'string' ? fields.status : 'ok';
  const exit = fields.exit_code;
  return typeof exit === 'number' || typeof exit === 'string' ? `${status}, exit ${exit}` : status;
}
