// The web port: the http_get tool reads one page through it; the adapter is src/adapters/http.

/** Reads one web page as text (the http_get tool); the adapter bounds time and size. */
export interface WebReader {
  get(url: string): Promise<{ url: string; status: number; content_type: string; text: string }>;
}
