// A local fake of Slack's Web API (what SLACK_API_URL points at): records every call and answers
// {ok:true,...} like Slack. Also serves files for url_private downloads and, for Socket Mode,
// apps.connections.open + a WebSocket server.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface SlackCall {
  method: string;
  body: Record<string, any>;
  auth?: string;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Slack's request signature (v0: HMAC-SHA256 of `v0:<ts>:<body>` with the app's signing secret), as Slack's headers. */
export function slackSignature(secret: string, body: string, ts = Math.floor(Date.now() / 1000)): Record<string, string> {
  return { 'x-slack-signature': 'v0=' + createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex'), 'x-slack-request-timestamp': String(ts) };
}

/** A request to the bot's Slack endpoint as Slack sends it: POSTed, signed now, with any extra headers. */
export function postSignedSlack(
  url: string,
  secret: string,
  body: string,
  type = 'application/x-www-form-urlencoded',
  extra: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': type, ...slackSignature(secret, body), ...extra }, body });
}

export class FakeSlack {
  calls: SlackCall[] = [];
  files = new Map<string, Buffer>();
  /** path -> Location: answered with a 302 (to test redirects of file downloads). */
  redirects = new Map<string, string>();
  downloads: { path: string; auth?: string }[] = [];
  /** File downloads being served right now, and the most at once (the bot's download cap). */
  activeDownloads = 0;
  maxActiveDownloads = 0;
  /** Wait this long before answering a file download, so that concurrent downloads overlap. */
  downloadDelayMs = 0;
  sockets: WebSocket[] = [];
  private server!: Server;
  wss?: WebSocketServer;
  base = '';

  async start(): Promise<this> {
    this.server = createServer(
      (req, res) =>
        void (async () => {
          const url = new URL(req.url!, 'http://x');
          const raw = await readBody(req);
          if (url.pathname.startsWith('/files/')) {
            this.downloads.push({ path: url.pathname, auth: req.headers.authorization });
            const location = this.redirects.get(url.pathname);
            if (location) return void res.writeHead(302, { location }).end();
            this.activeDownloads++;
            this.maxActiveDownloads = Math.max(this.maxActiveDownloads, this.activeDownloads);
            res.once('close', () => this.activeDownloads--);
            if (this.downloadDelayMs) await new Promise((r) => setTimeout(r, this.downloadDelayMs));
            const f = this.files.get(url.pathname);
            if (!f || req.headers.authorization !== 'Bearer xoxb-test-token') return void res.writeHead(404).end();
            res.writeHead(200, { 'content-type': 'text/plain', 'content-length': f.length });
            return void res.end(f);
          }
          if (url.pathname.startsWith('/upload/')) {
            this.calls.push({ method: 'upload', body: { bytes: raw.length, path: url.pathname, text: raw.toString('utf8') } });
            return void res.writeHead(200).end('OK - ' + raw.length);
          }
          if (url.pathname.startsWith('/response/')) {
            this.calls.push({ method: 'response_url', body: JSON.parse(raw.toString() || '{}') });
            return void res.writeHead(200).end('ok');
          }
          const method = url.pathname.replace(/^\/api\//, '');
          const type = req.headers['content-type'] ?? '';
          let body: Record<string, any>;
          if (type.includes('json')) body = JSON.parse(raw.toString() || '{}');
          else if (type.includes('multipart')) body = { multipart: raw.length };
          else body = Object.fromEntries(new URLSearchParams(raw.toString()));
          for (const k of ['blocks', 'files', 'attachments']) if (typeof body[k] === 'string') body[k] = JSON.parse(body[k]);
          this.calls.push({ method, body, auth: req.headers.authorization });
          const answer = this.answer(method, body);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(answer));
        })(),
    );
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.wss = new WebSocketServer({ server: this.server, path: '/socket' });
    this.wss.on('connection', (ws) => {
      this.sockets.push(ws);
      ws.send(
        JSON.stringify({
          type: 'hello',
          num_connections: 1,
          debug_info: { host: 'fake', approximate_connection_time: 18060 },
          connection_info: { app_id: 'A1' },
        }),
      );
    });
    return this;
  }

  /** Web API methods answered with {ok:false, error} (as Slack does for a message it cannot edit). */
  failing = new Map<string, string>();

  /** users.info's `locale` per user id, sent only when asked with include_locale (as Slack does). */
  userLocales = new Map<string, string>();

  answer(method: string, body: Record<string, any>): Record<string, any> {
    const error = this.failing.get(method);
    if (error) return { ok: false, error };
    switch (method) {
      case 'users.info': {
        const id = String(body.user);
        const locale = String(body.include_locale) === 'true' ? this.userLocales.get(id) : undefined;
        return { ok: true, user: { id, name: `user-${id}`, ...(locale ? { locale } : {}) } };
      }
      case 'auth.test':
        return { ok: true, url: 'https://fake.slack.com/', team: 'Fake', user: 'gpu-doctor', team_id: 'T1', user_id: 'UBOT', bot_id: 'BBOT' };
      case 'chat.postMessage':
        // Posted to a user id, Slack posts in the bot's DM with them and answers with that channel's id (D…).
        return {
          ok: true,
          channel: /^[UW][A-Z0-9]+$/.test(String(body.channel)) ? `D${String(body.channel).slice(1)}` : body.channel,
          ts: `${Date.now() / 1000}`,
          message: { text: body.text },
        };
      case 'files.getUploadURLExternal':
        return { ok: true, upload_url: `${this.base}/upload/F${this.calls.length}`, file_id: `F${this.calls.length}` };
      case 'files.completeUploadExternal':
        return { ok: true, files: [{ id: 'F1', title: 'x' }] };
      case 'apps.connections.open':
        return { ok: true, url: `${this.base.replace('http', 'ws')}/socket` };
      default:
        return { ok: true };
    }
  }

  of(method: string): SlackCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  async waitFor(method: string, count = 1, timeoutMs = 10000): Promise<SlackCall[]> {
    const t0 = Date.now();
    while (this.of(method).length < count) {
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${count}x ${method}; got ${this.calls.map((c) => c.method).join(', ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.of(method);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.terminate();
    this.wss?.close();
    this.server.closeAllConnections?.();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
