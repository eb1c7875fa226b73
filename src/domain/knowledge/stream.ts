// The one place a knowledge item's stream name is built or parsed.
const PREFIX = 'knowledge-';

export function knowledgeStream(knowledgeId: string): string {
  return PREFIX + knowledgeId;
}

export function knowledgeIdOf(streamName: string): string | null {
  return streamName.startsWith(PREFIX) ? streamName.slice(PREFIX.length) : null;
}
