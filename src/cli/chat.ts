// `nomos chat [--session ID]`: a terminal chat client. Streams each turn (tokens as they come, tool calls
// in one line each), and when a command needs approval offers approve/deny inline (with an operator token).
import { createInterface } from 'node:readline/promises';
import { Command } from 'commander';
import { serverClient } from './server-client.ts';

interface ChatMessage {
  type: string;
  session_id: string;
  data: Record<string, unknown>;
}

const short = (value: unknown, max = 100) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};

async function* sseMessages(response: Response): AsyncGenerator<ChatMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const data = buffer
        .slice(0, cut)
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('');
      buffer = buffer.slice(cut + 2);
      if (data !== '') yield JSON.parse(data) as ChatMessage;
    }
  }
}

export function chatCommand(): Command {
  return new Command('chat')
    .description('chat with the agent in the terminal (server at NOMOS_URL, token NOMOS_TOKEN)')
    .option('--session <id>', 'continue this session')
    .action(async (options: { session?: string }) => {
      const { base, headers } = serverClient(process.env);
      const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY });
      let sessionId = options.session;
      const out = (text: string) => process.stdout.write(text);
      const post = async (path: string, body: unknown) => {
        const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
        const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
        return { ok: res.ok, status: res.status, json };
      };
      try {
        for (;;) {
          const line = await rl.question('you> ').catch(() => null);
          if (line === null) break;
          const message = line.trim();
          if (message === '' ) continue;
          if (message === '/quit' || message === '/exit') break;
          let response: Response;
          try {
            response = await fetch(`${base}/chat`, { method: 'POST', headers, body: JSON.stringify({ message, ...(sessionId && { session_id: sessionId }) }) });
          } catch {
            throw new Error(`cannot reach the server at ${base} (set NOMOS_URL)`);
          }
          if (!response.ok) {
            const problem = (await response.json().catch(() => ({}))) as { detail?: string };
            out(`error ${response.status}: ${problem.detail ?? response.statusText}\n`);
            continue;
          }
          let speaking = false;
          const approvals: Array<Record<string, unknown>> = [];
          for await (const m of sseMessages(response)) {
            sessionId = m.session_id;
            const d = m.data;
            if (m.type !== 'token' && speaking) {
              out('\n');
              speaking = false;
            }
            switch (m.type) {
              case 'token':
                if (!speaking) out('nomos> ');
                speaking = true;
                out(String(d.text));
                break;
              case 'tool_use':
                out(`  → ${String(d.name)} ${short(d.args)}\n`);
                break;
              case 'tool_result':
                out(d.error ? `  ✗ ${short(d.error)}\n` : `  ✓ ${short(d.result)}\n`);
                break;
              case 'approval_required':
                approvals.push(d);
                out(`  ⚠ approval needed: ${String(d.command)} on ${String(d.target)} (${String(d.risk_class)})\n`);
                break;
              case 'text':
                break; // already streamed as tokens
              case 'error':
                out(`  ! ${String(d.reason)}: ${String(d.detail)}\n`);
                break;
              case 'done':
                out(`  (turn ${String(d.status)}; session ${m.session_id})\n`);
                break;
              default:
                break;
            }
          }
          for (const approval of approvals) {
            const answer = ((await rl.question(`approve "${String(approval.command)}" on ${String(approval.target)}? [y/N, or a reason to deny] `).catch(() => '')) ?? '').trim();
            const id = String(approval.approval_id);
            const result = /^y(es)?$/i.test(answer)
              ? await post(`/approvals/${id}/approve`, {})
              : await post(`/approvals/${id}/deny`, { reason: answer === '' || /^n(o)?$/i.test(answer) ? 'denied in the terminal' : answer });
            const detail = typeof result.json.detail === 'string' ? result.json.detail : `HTTP ${result.status}`;
            out(result.ok ? `  ${/^y/i.test(answer) ? 'approved' : 'denied'}\n` : `  could not: ${detail}\n`);
          }
        }
      } finally {
        rl.close();
      }
    });
}
