// How much command the gate takes. A command longer than this is refused at every door (HTTP, MCP, the agent's
// tools) and, should one reach the classifier anyway, judged as unreadable: no real operation needs more, and
// parsing and judging stay bounded for the largest command accepted.

/** The longest command accepted, in UTF-8 bytes. */
export const MAX_COMMAND_BYTES = 8 * 1024;
