// The layer rules (docs/architecture.md): the domain is pure; ports are the seams every layer may import;
// projections and commands never reach the process managers, the doors or the adapters; adapters implement
// ports and know nothing of the layers that use them; the web console talks HTTP. `npm test` runs this check.
const layer = (name) => `^src/${name}/`;
const forbid = (name, from, to, comment) => ({ name, comment, severity: 'error', from: { path: from }, to: { path: to } });

module.exports = {
  forbidden: [
    forbid('domain-is-pure', layer('domain'), '^src/(?!domain/)', 'src/domain imports only src/domain (and libraries)'),
    {
      name: 'domain-no-io',
      comment: 'the domain does no I/O: no Node built-ins',
      severity: 'error',
      from: { path: layer('domain') },
      to: { dependencyTypes: ['core'] },
    },
    forbid('ports-are-leaves', layer('ports'), '^src/(?!ports/|domain/)', 'ports declare interfaces over domain types only'),
    forbid('leases-are-plumbing', layer('leases'), '^src/(?!leases/|ports/)', 'leadership loops know the database port only'),
    forbid('projections-below-commands', layer('projections'), '^src/(commands|agent|execution|api|cli|adapters)/', 'projections read the log through the port, not through commands or adapters'),
    forbid('commands-are-wiring', layer('commands'), '^src/(agent|execution|api|cli|adapters)/', 'commands load, decide and append; side effects live in process managers, I/O in adapters'),
    forbid('process-managers-use-ports', '^src/(agent|execution)/', '^src/(api|cli|adapters)/', 'the agent loop and execution orchestration reach I/O through ports'),
    forbid('adapters-implement-ports', layer('adapters'), '^src/(commands|projections|agent|execution|api|cli)/', 'adapters know ports and domain types only'),
    forbid('api-is-a-door', layer('api'), '^src/cli/', 'the HTTP API does not depend on the CLI'),
    forbid('mcp-is-transport-free', layer('mcp'), '^src/(api|cli|adapters)/', 'the MCP server (tools, resources, prompt, sessions) knows no transport: HTTP (src/api/mcp.ts) and stdio (src/cli/mcp.ts) carry it'),
    forbid('src-not-tests', '^src/', '^(test|bench|web)/', 'production code never imports tests, the bench or the web console'),
    {
      name: 'console-uses-the-api',
      comment: 'the web console reaches the server only through HTTP: it imports server types (type-only) and pure rules, never code that does I/O',
      severity: 'error',
      from: { path: '^web/src/' },
      to: { path: '^src/(?!domain/|cli/audit-report\\.ts$)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-circular',
      comment: 'a cycle between modules makes layers meaningless',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
