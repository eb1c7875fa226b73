// The one place a session's stream name is built or parsed.
const PREFIX = 'session-';

export function sessionStream(sessionId: string): string {
  return PREFIX + sessionId;
}

export function sessionIdOf(streamName: string): string | null {
  return streamName.startsWith(PREFIX) ? streamName.slice(PREFIX.length) : null;
}
