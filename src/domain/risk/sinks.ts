// Where output may go while a command still only reads: nowhere, or back to the caller.
export const HARMLESS_SINKS: readonly string[] = ['/dev/null', '/dev/stdout', '/dev/stderr', '-'];

export const isSink = (path: string): boolean => HARMLESS_SINKS.includes(path);
