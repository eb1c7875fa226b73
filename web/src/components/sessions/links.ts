// Page-local anchors are element ids reached through ?focus=…, since the address's # already holds the route.
// Which tool call caused what is read in ./caused.ts (re-exported here for the components that import it from here).
import { href } from '../../lib/router.svelte.ts';

export { type Caused, causedBy } from './caused.ts';

export const anchor = {
  call: (id: string) => `call-${id}`,
  execution: (id: string) => `exec-${id}`,
  approval: (id: string) => `approval-${id}`,
  event: (position: number) => `event-${position}`,
};

/** An address that opens the session scrolled to one of its elements. */
export const focusHref = (sessionId: string, elementId: string): string => href('sessions', sessionId, { focus: elementId });
