// A session an external agent worked in over MCP, in the console: listed like any other, and each of its tool
// calls names who made it and through which client (the name and version from the MCP handshake).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type TestBrowser, launchBrowser } from '../support/browser.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const embedded = databases.find((d) => d.name === 'pglite')!;

describe('an MCP session in the console', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let mcp: Client;

  beforeAll(async () => {
    server = await startTestServer(embedded);
    browser = await launchBrowser();
    mcp = new Client({ name: 'claude-code', version: '2.1.7' });
    // Auth is off here (loopback): the client is recorded as agent:<its handshake name>.
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  }, 60_000);
  afterAll(async () => {
    await mcp?.close();
    await browser?.close();
    await server?.close();
  });

  it('lists the session and shows each tool call with its actor and client', async () => {
    const goal = (await mcp.callTool({ name: 'set_goal', arguments: { goal: 'Check the disks of the fleet' } })) as CallToolResult;
    const sessionId = goal._meta?.['nomos/session_id'] as string;
    await mcp.callTool({ name: 'classify_command', arguments: { command: 'smartctl -a /dev/sda' } });

    const { page, errors, screenshot } = await browser.open(`${server.url}/#/sessions`);
    await page.getByRole('link', { name: 'Check the disks of the fleet' }).click();
    await page.getByRole('heading', { level: 1, name: 'Check the disks of the fleet' }).waitFor();
    expect(page.url()).toContain(sessionId);
    const transcript = page.getByRole('region', { name: 'Transcript' });
    // An external agent has no turns: its calls gather under one assistant message until something else is said.
    const group = transcript.locator('details.calls summary');
    await group.waitFor();
    expect(await group.innerText()).toBe('2 tool calls: set_goal, classify_command');
    await group.click();
    const via = transcript.getByTestId('via');
    await via.first().waitFor();
    expect(await via.allInnerTexts()).toEqual(['by agent:claude-code via claude-code 2.1.7', 'by agent:claude-code via claude-code 2.1.7']);
    expect(await page.getByLabel('arguments of classify_command').innerText()).toContain('smartctl -a /dev/sda');
    await screenshot('console-mcp-session');
    expect(errors).toEqual([]);
  });
});
