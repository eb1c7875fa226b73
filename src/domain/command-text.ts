// What text the gate takes as a command or a path, checked at every door before anything is recorded: a
// command no longer than MAX_COMMAND_BYTES, and no character that no shell command needs and that makes what
// an operator reads differ from what the shell runs. An allow-list: TAB and LF, and any character that is
// neither a control nor a bidirectional formatting mark.
import { z } from 'zod';
import { MAX_COMMAND_BYTES } from './risk/limits.ts';

export interface TextProblem {
  /** command_too_long or control_character: stable codes the API answers with. */
  readonly code: 'command_too_long' | 'control_character';
  readonly message: string;
  readonly detail: Readonly<Record<string, number | string>>;
}

/**
 * Controls: C0 (U+0000–U+001F), DEL and C1 (U+007F–U+009F), which dash passes to programs as bytes: NUL cuts an
 * argument where the shell and the classifier disagree; CR makes `ls\r` a program no one meant, and a terminal
 * shows a line other than the one that runs; ESC draws over what an approver reads. Bidirectional marks
 * (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069) reorder what the console shows against what runs.
 */
// eslint-disable-next-line no-control-regex -- matching controls is the point
const NEVER = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
/** In a path every control is refused, TAB and LF too: no path the gate inspects needs one. */
// eslint-disable-next-line no-control-regex -- matching controls is the point
const NEVER_IN_PATH = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

const encoder = new TextEncoder();

/** U+0000 as the escape a reader can type back. */
const shown = (char: string) => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

function controlAt(text: string, pattern: RegExp, what: string): TextProblem | null {
  const match = pattern.exec(text);
  if (match === null) return null;
  const char = shown(match[0]);
  return {
    code: 'control_character',
    message: `the ${what} holds the control character ${char} at index ${match.index}; ${what === 'command' ? 'a command may hold TAB and LF, no other control or bidirectional mark' : 'a path may hold no control or bidirectional mark'}`,
    detail: { character: char, index: match.index },
  };
}

/** Why the gate refuses `command`, or null when it takes it. */
export function commandTextProblem(command: string): TextProblem | null {
  const bytes = encoder.encode(command).length;
  if (bytes > MAX_COMMAND_BYTES) {
    return {
      code: 'command_too_long',
      message: `the command is ${bytes} bytes (UTF-8), over the limit of ${MAX_COMMAND_BYTES} bytes`,
      detail: { max_bytes: MAX_COMMAND_BYTES, bytes },
    };
  }
  return controlAt(command, NEVER, 'command');
}

/** Why the gate refuses `path` (inspect_path's), or null when it takes it. */
export function pathTextProblem(path: string): TextProblem | null {
  return controlAt(path, NEVER_IN_PATH, 'path');
}

/**
 * A zod check refusing what `problem` names, as an issue whose params carry the stable code and its figures:
 * the API answers that code (src/api/errors.ts), a tool's caller reads the message.
 */
const refusing = (problem: (text: string) => TextProblem | null) => (text: string, ctx: z.core.$RefinementCtx<string>) => {
  const found = problem(text);
  if (found !== null) ctx.addIssue({ code: 'custom', message: found.message, params: { problem: found.code, ...found.detail }, input: text });
};

/** A command as every door takes it (run, classify_command, POST /classify, the tools). */
export const CommandText = z
  .string()
  .superRefine(refusing(commandTextProblem))
  .describe(`a shell command: at most ${MAX_COMMAND_BYTES} bytes of UTF-8, no control character but TAB and LF`);

/** inspect_path's path. */
export const PathText = z
  .string()
  .min(1)
  .max(4_096)
  .superRefine(refusing(pathTextProblem))
  .describe('an absolute or relative path on the targets, with no control character');
