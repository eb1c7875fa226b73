// Builds the web console into web/dist, which `nomos serve` serves at `/`. Everything is bundled: the page fetches
// nothing from anywhere but its own server. `npm run dev:web` proxies the API to a server on 127.0.0.1:8092.
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';

const API = process.env.NOMOS_URL ?? 'http://127.0.0.1:8092';
const apiPaths = ['/sessions', '/approvals', '/executions', '/entities', '/knowledge', '/classify', '/chat', '/changes', '/me', '/projections', '/healthz', '/usage', '/agent', '/policy'];

export default defineConfig({
  root: import.meta.dirname,
  plugins: [svelte()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, target: 'es2022', chunkSizeWarningLimit: 1024 },
  server: { proxy: Object.fromEntries(apiPaths.map((p) => [p, { target: API, changeOrigin: false }])) },
});
