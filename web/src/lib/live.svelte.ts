// One live connection per page to GET /changes: the store's head position each time it moves (on any server).
// Views re-read what they show when `live.position` changes, instead of polling.
import { follow, type Following, type StreamState } from './sse.ts';

class Live {
  position = $state<number | null>(null);
  state = $state<StreamState>('connecting');
  detail = $state<string | null>(null);
  #following: Following | null = null;

  start(): void {
    this.stop();
    this.#following = follow({
      resume: () => '/changes',
      onMessage: (data) => {
        const p = (data as { position?: unknown }).position;
        if (typeof p === 'number') this.position = p;
      },
      onState: (state, detail) => {
        this.state = state;
        this.detail = detail ?? null;
      },
    });
    this.#following.done.catch(() => undefined);
  }

  stop(): void {
    this.#following?.close();
    this.#following = null;
  }
}

export const live = new Live();
