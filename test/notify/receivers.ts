// Real receivers for notification tests: an HTTP server that records every request (and answers what the test
// says), a Standard Webhooks signature check written from the specification with node:crypto (independent of
// the library that signs), and a real SMTP server (aiosmtpd, Debian's python3-aiosmtpd) writing each mail it
// accepts to a directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** What the receiver answered. */
  readonly status: number;
}

export interface HttpReceiver {
  readonly url: string;
  readonly received: Received[];
  /** The status for the next request (default 200). */
  answer: (request: { headers: IncomingHttpHeaders; body: string }) => number;
  close(): Promise<void>;
}

export async function httpReceiver(): Promise<HttpReceiver> {
  const received: Received[] = [];
  const receiver: HttpReceiver = {
    url: '',
    received,
    answer: () => 200,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const status = receiver.answer({ headers: req.headers, body });
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'receiver down for the test');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  (receiver as { url: string }).url = `http://127.0.0.1:${address.port}`;
  return receiver;
}

/** A fresh Standard Webhooks secret: whsec_ and a base64 key of 32 bytes. */
export function webhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The Standard Webhooks check (standardwebhooks.com, spec "Verifying"): HMAC-SHA256 with the key after whsec_
 * (base64-decoded) over `${webhook-id}.${webhook-timestamp}.${body}`, base64, compared with each `v1,` entry of
 * webhook-signature; and a timestamp within 5 minutes of now.
 */
export function verifyWebhook(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export interface SmtpServer {
  readonly port: number;
  /** Each mail accepted so far: its envelope and its raw text. */
  mails(): Promise<Array<{ from: string; to: string[]; data: string }>>;
  close(): Promise<void>;
}

const HANDLER = `
import json, os, sys, uuid
from aiosmtpd.controller import Controller
import asyncio
out = sys.argv[2]
class Handler:
    async def handle_DATA(self, server, session, envelope):
        record = {"from": envelope.mail_from, "to": envelope.rcpt_tos, "data": envelope.content.decode("utf8", "replace")}
        tmp = os.path.join(out, "." + uuid.uuid4().hex)
        with open(tmp, "w") as f:
            json.dump(record, f)
        os.rename(tmp, os.path.join(out, uuid.uuid4().hex + ".json"))
        return "250 Message accepted for delivery"
controller = Controller(Handler(), hostname="127.0.0.1", port=int(sys.argv[1]))
controller.start()
print("ready", flush=True)
try:
    sys.stdin.read()
finally:
    controller.stop()
`;

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** aiosmtpd on a free loopback port (Debian's /usr/bin/python3 has it). */
export async function smtpServer(): Promise<SmtpServer> {
  const dir = await mkdtemp(join(tmpdir(), 'nomos-smtp-'));
  const script = join(dir, 'server.py');
  const out = join(dir, 'mail');
  await writeFile(script, HANDLER);
  await import('node:fs/promises').then((fs) => fs.mkdir(out));
  const port = await freePort();
  const child: ChildProcess = spawn('/usr/bin/python3', [script, String(port), out], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`aiosmtpd exited (${code})`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
  });
  // The port answers once the controller has started; a connect confirms it.
  await new Promise<void>((resolve, reject) => connect(port, '127.0.0.1').once('connect', function (this: import('node:net').Socket) {
    this.destroy();
    resolve();
  }).once('error', reject));
  return {
    port,
    async mails() {
      const names = (await readdir(out)).filter((n) => n.endsWith('.json'));
      return Promise.all(names.map(async (n) => JSON.parse(await readFile(join(out, n), 'utf8')) as { from: string; to: string[]; data: string }));
    },
    async close() {
      child.stdin!.end();
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
