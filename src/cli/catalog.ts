// What the command line's help and exit statuses name, in a module that loads nothing: `nomos --help` must not
// load the runtime to list the projections.

/** The projections' names (a test keeps them equal to the runtime's list). */
export const PROJECTION_NAMES = ['sessions', 'transcript', 'plans', 'entities', 'executions', 'knowledge', 'model_calls'] as const;

/** The exit status of `nomos classify` for each verdict, so that a script can branch on it without parsing JSON. */
export const CLASSIFY_EXIT = { reversible_low: 0, config_mutation: 3, destructive: 4 } as const;

/** Where the verbs that talk to a running server find it when NOMOS_URL is unset. */
export const DEFAULT_URL = 'http://127.0.0.1:8092';

/** `nomos chat`: how long, after an approval or a denial, to wait for the agent to carry on. */
export const DEFAULT_CONTINUATION_WAIT_S = 15;
