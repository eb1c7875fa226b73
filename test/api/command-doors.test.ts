// A command or a path is refused at every door it can come through — HTTP's run, classify_command, POST
// /classify, a plan step's command and inspect_path, and the run, classify_command and inspect_path tools over
// MCP and for the built-in agent — when it is longer than MAX_COMMAND_BYTES (counted in UTF-8 bytes) or holds a
// character no shell command needs; the refusal names the limit or the character, and nothing is appended.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../../src/agent/tools.ts';
import { MAX_COMMAND_BYTES } from '../../src/domain/risk/limits.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const hex = (code: number) => `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;

/** Every character a command may not hold: C0 but TAB and LF, DEL and C1, and the bidirectional marks. */
const REFUSED_IN_COMMANDS = [
  ...Array.from({ length: 0x20 }, (_, i) => i).filter((c) => c !== 0x09 && c !== 0x0a),
  ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i),
  0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
];
/** A path may hold none of those, nor TAB or LF. */
const REFUSED_IN_PATHS = [...REFUSED_IN_COMMANDS, 0x09, 0x0a];

/** Where in a command a character hides: in front, inside a word, inside quotes, at the end. */
const placements = (char: string) => [`${char}uptime`, `up${char}time`, `echo '${char}'`, `uptime${char}`];

/** Commands just over the limit, each in characters of another width: the bytes count, not the UTF-16 units. */
const tooLong = [
  ['ASCII', 'a'.repeat(MAX_COMMAND_BYTES + 1)],
  ['two-byte', `echo ${'é'.repeat(Math.ceil((MAX_COMMAND_BYTES - 4) / 2))}`],
  ['three-byte', `echo ${'€'.repeat(Math.ceil((MAX_COMMAND_BYTES - 4) / 3))}`],
  ['four-byte', `echo ${'🦀'.repeat(Math.ceil((MAX_COMMAND_BYTES - 4) / 4))}`],
  ['90 KB pipeline', Array.from({ length: 6_000 }, (_, i) => `grep x${i}`).join(' | ')],
] as const;

const byteLength = (text: string) => new TextEncoder().encode(text).length;

describe.each(databases)('commands at every door ($name)', (database) => {
  let server: TestServer;
  let session: string;
  let mcp: Client;
  const head = async () => (await server.runtime.store.head()).position;

  beforeAll(async () => {
    server = await startTestServer(database);
    const reg = await server.request('POST', '/entities', { entities: [{ slug: 'host:box', type: 'host', ssh: { host: '127.0.0.1', port: 1, user: 'root' } }] });
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    session = (await server.request('POST', '/sessions')).body.session_id;
    mcp = new Client({ name: 'doors-test', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  }, 60_000);
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
  });

  /** Each HTTP door, given the text to put in it. */
  const httpDoors: Array<[string, (text: string) => [string, unknown]]> = [
    ['POST /classify', (command) => ['/classify', { command }]],
    ['run', (command) => [`/sessions/${session}/commands`, { type: 'run', target: 'host:box', command }]],
    ['classify_command', (command) => [`/sessions/${session}/commands`, { type: 'classify_command', command }]],
    // A plan step's command is what an approver reads before it runs: held to the same text.
    ['propose_plan', (command) => [`/sessions/${session}/commands`, { type: 'propose_plan', steps: [{ title: 'a step', command }] }]],
  ];

  const refusedOverHttp = async (path: string, body: unknown, code: string) => {
    const before = await head();
    const res = await server.request('POST', path, body);
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.code).toBe(code);
    expect(await head()).toBe(before);
    return res.body;
  };

  describe.each(httpDoors)('%s', (_door, make) => {
    it.each(tooLong)('refuses a %s command over the limit with command_too_long, naming the limit and its size', async (_kind, command) => {
      const body = await refusedOverHttp(...make(command), 'command_too_long');
      expect(body.max_bytes).toBe(MAX_COMMAND_BYTES);
      expect(body.bytes).toBe(byteLength(command));
      expect(body.detail).toContain(`${byteLength(command)} bytes`);
      expect(body.detail).toContain(`${MAX_COMMAND_BYTES} bytes`);
    });

    it('refuses every control character and bidirectional mark, wherever it stands, naming it', async () => {
      for (const code of REFUSED_IN_COMMANDS) {
        for (const command of placements(String.fromCodePoint(code))) {
          const body = await refusedOverHttp(...make(command), 'control_character');
          expect(body.detail).toContain(hex(code));
        }
      }
    });
  });

  it('takes a command of exactly the limit, and TAB and LF in a command', async () => {
    for (const command of ['a'.repeat(MAX_COMMAND_BYTES), `echo ${'€'.repeat((MAX_COMMAND_BYTES - 5) / 3)}`, 'uptime\n\tdf -h']) {
      expect(byteLength(command)).toBeLessThanOrEqual(MAX_COMMAND_BYTES);
      const res = await server.request('POST', '/classify', { command });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    }
  });

  it('refuses any control character or bidirectional mark in an inspect_path path', async () => {
    for (const code of REFUSED_IN_PATHS) {
      for (const path of [`${String.fromCodePoint(code)}/srv`, `/srv/a${String.fromCodePoint(code)}b`, `/srv${String.fromCodePoint(code)}`]) {
        const body = await refusedOverHttp(`/sessions/${session}/commands`, { type: 'inspect_path', path, targets: ['host:box'] }, 'control_character');
        expect(body.detail).toContain(hex(code));
      }
    }
  });

  const toolCases: Array<[string, string, Record<string, unknown>, RegExp]> = [
    ['run', 'too long', { target: 'host:box', command: 'a'.repeat(MAX_COMMAND_BYTES + 1) }, new RegExp(`${MAX_COMMAND_BYTES + 1} bytes.*limit of ${MAX_COMMAND_BYTES} bytes`)],
    ['run', 'NUL', { target: 'host:box', command: 'uptime\0; rm -rf /' }, /U\+0000/],
    ['run', 'CR', { target: 'host:box', command: 'uptime\r' }, /U\+000D/],
    ['classify_command', 'too long', { command: '€'.repeat(MAX_COMMAND_BYTES / 3 + 1) }, /limit of 8192 bytes/],
    ['classify_command', 'ESC', { command: 'echo \u001b[2Jhi' }, /U\+001B/],
    ['inspect_path', 'LF', { path: '/srv\n/etc', targets: ['host:box'] }, /U\+000A/],
  ];

  it.each(toolCases)('MCP %s refuses a %s argument as a tool error the model reads, recording nothing', async (name, _what, args, message) => {
    const before = await head();
    const result = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')).toMatch(message);
    expect(await head()).toBe(before);
  });

  it.each(toolCases)("the agent's %s refuses a %s argument as a tool error, running nothing", async (name, _what, args, message) => {
    // The services are never reached: a refused argument stops the call before its handler.
    const refused = await callTool(name, JSON.stringify(args), { sessionId: session, ctx: { actor: { role: 'agent', id: 'test' }, correlationId: 'c' } }, undefined as never);
    expect(refused.result).toBeNull();
    expect(refused.error).toMatch(message);
  });
});
