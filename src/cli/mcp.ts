// `nomos mcp`: Nomos as a stdio MCP server for agents that start their tools as a process (Claude Code, Codex,
// …). It is a pipe, not a second server: each message from stdin goes to a running `nomos serve` at NOMOS_URL's
// /mcp with NOMOS_TOKEN, and each answer comes back on stdout, so the server stays the one writer and the one
// judge of roles. A request the server cannot be asked (unreachable, or refused before MCP: a missing or wrong
// token) is answered on stdout with a JSON-RPC error that says why, and said on stderr too. `--name` replaces the
// client name of the handshake: with auth off it is the name the server records the calls under (agent:NAME).
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { type JSONRPCMessage, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_URL } from './server-client.ts';

/** The server's own words from a refused POST ("Error POSTing to endpoint: {jsonrpc error}"), or the transport's. */
function explain(error: unknown, url: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const body = /^Error POSTing to endpoint: (.*)$/s.exec(message)?.[1];
  if (body !== undefined) {
    try {
      const parsed = JSON.parse(body) as { error?: { message?: unknown }; detail?: unknown };
      const said = parsed.error?.message ?? parsed.detail;
      if (typeof said === 'string') return `the Nomos server at ${url} refused: ${said}`;
    } catch {
      // not JSON: the text as it came
    }
    return `the Nomos server at ${url} refused: ${body.slice(0, 500)}`;
  }
  if (message === 'fetch failed' || /ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(message)) return `cannot reach the Nomos server at ${url} (set NOMOS_URL): ${message}`;
  return message;
}

/** The handshake with clientInfo.name replaced; any other message as it came. */
export function renamed(message: JSONRPCMessage, name: string | undefined): JSONRPCMessage {
  if (name === undefined || !isJSONRPCRequest(message) || message.method !== 'initialize') return message;
  const params = (message.params ?? {}) as { clientInfo?: Record<string, unknown> };
  return { ...message, params: { ...params, clientInfo: { version: '', ...params.clientInfo, name } } };
}

export async function bridgeStdio(env: NodeJS.ProcessEnv = process.env, options: { name?: string } = {}): Promise<void> {
  const base = (env.NOMOS_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  const url = `${base}/mcp`;
  const token = env.NOMOS_TOKEN;
  const upstream = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} } });
  const local = new StdioServerTransport();
  const warn = (text: string) => process.stderr.write(`nomos mcp: ${text}\n`);

  local.onmessage = (message: JSONRPCMessage) => {
    upstream.send(renamed(message, options.name)).catch((error: unknown) => {
      const text = explain(error, url);
      warn(text);
      if (isJSONRPCRequest(message)) void local.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: text } });
    });
  };
  upstream.onmessage = (message: JSONRPCMessage) => {
    // The handshake's answer names the protocol version; later requests carry it in their header, as MCP says.
    const result = 'result' in message ? (message.result as { protocolVersion?: unknown }) : undefined;
    if (typeof result?.protocolVersion === 'string') upstream.setProtocolVersion(result.protocolVersion);
    void local.send(message);
  };
  upstream.onerror = (error) => warn(explain(error, url));
  local.onerror = (error) => warn(error.message);

  await upstream.start();
  await local.start();
  // The client closed our stdin: end the MCP session on the server, then go.
  await new Promise<void>((resolve) => process.stdin.once('end', resolve));
  await upstream.terminateSession().catch(() => undefined);
  await upstream.close();
  await local.close();
}
