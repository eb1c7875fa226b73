// Builds dist/ for bin/nomos.mjs and `npm start`: src/cli/main.ts and everything it imports, bundled by esbuild
// into ES modules with source maps. Each dynamic import() becomes a chunk of its own, loaded only when that path
// runs (a command, an adapter), so `nomos --help` and `nomos serve` load what they use. Bundled, a package's
// hundreds of files are read, resolved and compiled as one, and CommonJS packages skip Node's export scan.
// Packages that find files beside their own code (WebAssembly, native addons, static assets) stay outside.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const EXTERNAL = [
  '@electric-sql/pglite', // its .wasm and .data, found from its own URL
  'ssh2', // an optional native addon (cpu-features)
  'cpu-features',
  'pg-native', // pg's optional native driver, required only when asked for
  '@eventstore/db-client', // gRPC, loaded only when EVENTSTORE_URL is set
  '@fastify/swagger-ui', // serves its own static files from its directory
];

rmSync('dist', { recursive: true, force: true });
await build({
  // The worker threads are entries of their own: src/adapters/classifier-pool.ts and src/log/leaf-pool.ts start them by path.
  entryPoints: ['src/cli/main.ts', 'src/adapters/classifier-thread.ts', 'src/log/leaf-thread.ts'],
  outbase: 'src',
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  sourcesContent: false,
  external: EXTERNAL,
  // CommonJS code bundled into an ES module still calls require() for Node's built-ins.
  banner: { js: "import { createRequire as __nomosRequire } from 'node:module'; const require = __nomosRequire(import.meta.url);" },
  logLevel: 'warning',
});
