// A local fake of Discord: REST (GET /gateway/bot, interaction callbacks, webhook edits and deletes,
// channel messages, threads started on a message, command registration, attachment downloads) and a
// gateway WebSocket (HELLO, IDENTIFY -> READY, dispatches: slash commands, autocomplete, messages).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export const BOT_ID = '900000000000000001';
export const APP_ID = '900000000000000002';
export const GUILD_ID = '900000000000000003';
export const CHANNEL_ID = '900000000000000004';
export const DM_CHANNEL_ID = '900000000000000005';

export interface RestCall {
  method: string;
  path: string;
  body: any;
  files: string[];
  /** The uploaded files' contents by file name (multipart requests). */
  fileData: Record<string, string>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Splits a multipart/form-data body into its parts (headers + content), by the boundary. */
function multipartParts(raw: Buffer, type: string): { headers: string; content: Buffer }[] {
  const boundary = type.split('boundary=')[1]?.replace(/^"|"$/g, '');
  if (!boundary) return [];
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: { headers: string; content: Buffer }[] = [];
  let at = raw.indexOf(delimiter);
  while (at >= 0) {
    const next = raw.indexOf(delimiter, at + delimiter.length);
    if (next < 0) break;
    const part = raw.subarray(at + delimiter.length + 2, next - 2); // after CRLF, before CRLF
    const split = part.indexOf('\r\n\r\n');
    if (split >= 0) parts.push({ headers: part.subarray(0, split).toString('latin1'), content: part.subarray(split + 4) });
    at = next;
  }
  return parts;
}

function parseBody(raw: Buffer, type: string): { body: any; files: string[]; fileData: Record<string, string> } {
  if (type.includes('json')) return { body: raw.length ? JSON.parse(raw.toString()) : null, files: [], fileData: {} };
  if (type.includes('multipart')) {
    let body: any = null;
    const files: string[] = [];
    const fileData: Record<string, string> = {};
    for (const p of multipartParts(raw, type)) {
      const filename = /filename="([^"]*)"/.exec(p.headers)?.[1];
      if (/name="payload_json"/.test(p.headers)) body = JSON.parse(p.content.toString('utf8'));
      else if (filename !== undefined && /name="files\[\d+\]"/.test(p.headers)) {
        files.push(filename);
        fileData[filename] = p.content.toString('utf8');
      }
    }
    return { body, files, fileData };
  }
  return { body: raw.toString(), files: [], fileData: {} };
}

export class FakeDiscord {
  calls: RestCall[] = [];
  files = new Map<string, Buffer>();
  /** Attachment downloads being served right now, and the most at once (the bot's download cap). */
  activeDownloads = 0;
  maxActiveDownloads = 0;
  downloadDelayMs = 0;
  sockets: WebSocket[] = [];
  identified = 0;
  private seq = 0;
  private server!: Server;
  private wss!: WebSocketServer;
  base = '';
  private nextId = 1000n;
  /** Answer every message edit (PATCH) with 403 Missing Access. */
  failingEdits = false;
  /** Accept IDENTIFY but never send READY (a gateway that hangs during login). */
  withholdReady = false;

  async start(): Promise<this> {
    this.server = createServer(
      (req, res) =>
        void (async () => {
          const url = new URL(req.url!, 'http://x');
          const raw = await readBody(req);
          const path = url.pathname.replace(/^\/api/, '').replace(/^\/v\d+/, '');
          if (path.startsWith('/files/')) {
            this.activeDownloads++;
            this.maxActiveDownloads = Math.max(this.maxActiveDownloads, this.activeDownloads);
            res.once('close', () => this.activeDownloads--);
            if (this.downloadDelayMs) await new Promise((r) => setTimeout(r, this.downloadDelayMs));
            const f = this.files.get(path);
            if (!f) return void res.writeHead(404).end();
            res.writeHead(200, { 'content-type': 'text/plain', 'content-length': f.length });
            return void res.end(f);
          }
          const { body, files, fileData } = parseBody(raw, req.headers['content-type'] ?? '');
          this.calls.push({ method: req.method!, path, body, files, fileData });
          const json = (status: number, b: unknown) => {
            res.writeHead(status, { 'content-type': 'application/json' });
            res.end(JSON.stringify(b));
          };
          // A message the bot may no longer edit (deleted, or access lost): Discord's 403 error body.
          if (req.method === 'PATCH' && this.failingEdits) return json(403, { message: 'Missing Access', code: 50001 });
          if (path === '/gateway/bot')
            return json(200, {
              url: this.base.replace('http', 'ws') + '/gateway',
              shards: 1,
              session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 },
            });
          if (/\/interactions\/\d+\/[^/]+\/callback/.test(path)) return void res.writeHead(204).end();
          if (req.method === 'DELETE' && /\/webhooks\/\d+\/[^/]+\/messages\//.test(path)) return void res.writeHead(204).end();
          // POST /channels/{channel.id}/messages/{message.id}/threads: a public thread started on that message.
          const startThread = /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/.exec(path);
          if (startThread && req.method === 'POST') return json(201, this.thread(startThread[1], startThread[2], body));
          // A message the bot sent, edited or deleted (PATCH/DELETE /channels/{channel.id}/messages/{message.id}).
          const sentMessage = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(path);
          if (sentMessage && req.method === 'PATCH') return json(200, { ...this.message(body, sentMessage[1]), id: sentMessage[2] });
          if (sentMessage && req.method === 'DELETE') return void res.writeHead(204).end();
          // A thread renamed (PATCH /channels/{thread.id} with a name), or deleted.
          const threadPath = /^\/channels\/(\d+)$/.exec(path);
          const known = threadPath ? this.threads.get(threadPath[1]) : undefined;
          if (known && req.method === 'PATCH') {
            known.name = body?.name ?? known.name;
            return json(200, this.thread(known.parentId, known.messageId, { name: known.name }));
          }
          if (known && threadPath && req.method === 'DELETE') {
            const gone = this.thread(known.parentId, known.messageId, { name: known.name });
            this.threads.delete(threadPath[1]);
            return json(200, gone);
          }
          if (/\/webhooks\/\d+\/[^/]+\/messages\/(@|%40)original/.test(path) || /\/channels\/\d+\/messages$/.test(path) || /\/webhooks\/\d+\/[^/]+$/.test(path))
            return json(200, this.message(body, /\/channels\/(\d+)\//.exec(path)?.[1]));
          // A guild text channel the bot posts to (a scheduled digest: client.channels.fetch, then send).
          const channel = /^\/channels\/(\d+)$/.exec(path);
          if (channel && req.method === 'GET' && channel[1] !== DM_CHANNEL_ID)
            return json(200, {
              id: channel[1],
              type: 0,
              guild_id: GUILD_ID,
              name: 'ml',
              position: 0,
              permission_overwrites: [],
              nsfw: false,
              parent_id: null,
              last_message_id: null,
              rate_limit_per_user: 0,
              topic: null,
            });
          // A direct message: the user, then the DM channel with them (POST /users/@me/channels), then its messages.
          const user = /^\/users\/(\d+)$/.exec(path);
          if (user && req.method === 'GET')
            return json(200, { id: user[1], username: `user${user[1].slice(-4)}`, discriminator: '0', global_name: null, avatar: null });
          if (path === '/users/@me/channels' && req.method === 'POST')
            return json(200, {
              id: DM_CHANNEL_ID,
              type: 1,
              last_message_id: null,
              recipients: [{ id: body?.recipient_id, username: 'user', discriminator: '0', global_name: null, avatar: null }],
            });
          if (/\/applications\/\d+\/(guilds\/\d+\/)?commands/.test(path))
            return json(200, Array.isArray(body) ? body.map((c: any, i: number) => ({ ...c, id: String(i + 1), application_id: APP_ID, version: '1' })) : []);
          json(404, { message: 'Unknown', code: 0 });
        })(),
    );
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.wss = new WebSocketServer({ server: this.server, path: '/gateway' });
    this.wss.on('connection', (ws) => {
      this.sockets.push(ws);
      ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41250 }, s: null, t: null }));
      ws.on('message', (data) => {
        const msg = JSON.parse(Buffer.isBuffer(data) ? data.toString() : '{}');
        if (msg.op === 1) ws.send(JSON.stringify({ op: 11, d: null, s: null, t: null }));
        if (msg.op === 2) {
          this.identified++;
          if (this.withholdReady) return;
          this.send('READY', {
            v: 10,
            user: { id: BOT_ID, username: 'gpu-doctor', discriminator: '0', global_name: null, avatar: null, bot: true, flags: 0 },
            guilds: [],
            session_id: 'fake-session',
            resume_gateway_url: this.base.replace('http', 'ws') + '/gateway',
            application: { id: APP_ID, flags: 0 },
            shard: [0, 1],
          });
          this.send('GUILD_CREATE', this.guild());
        }
      });
    });
    return this;
  }

  private message(body: any, channelId = CHANNEL_ID) {
    return {
      id: String(this.nextId++),
      channel_id: channelId,
      author: { id: BOT_ID, username: 'gpu-doctor', discriminator: '0', avatar: null, bot: true },
      content: body?.content ?? '',
      embeds: body?.embeds ?? [],
      attachments: [],
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      pinned: false,
      type: 0,
    };
  }

  /** Threads started so far: id -> parent channel, the message it was started on, and its name. */
  threads = new Map<string, { parentId: string; messageId: string; name: string }>();

  private thread(parentId: string, messageId: string, body: any) {
    // The thread started on a message takes that message's id, as Discord does.
    const id = messageId;
    this.threads.set(id, { parentId, messageId, name: body?.name });
    return {
      id,
      type: 11,
      guild_id: GUILD_ID,
      parent_id: parentId,
      name: body?.name ?? '',
      owner_id: BOT_ID,
      last_message_id: null,
      rate_limit_per_user: 0,
      message_count: 0,
      member_count: 1,
      flags: 0,
      total_message_sent: 0,
      thread_metadata: {
        archived: false,
        auto_archive_duration: body?.auto_archive_duration ?? 4320,
        archive_timestamp: new Date().toISOString(),
        locked: false,
        create_timestamp: new Date().toISOString(),
      },
    };
  }

  guild() {
    return {
      id: GUILD_ID,
      name: 'ML team',
      icon: null,
      owner_id: '1',
      unavailable: false,
      member_count: 2,
      large: false,
      features: [],
      emojis: [],
      stickers: [],
      members: [],
      presences: [],
      voice_states: [],
      threads: [],
      stage_instances: [],
      guild_scheduled_events: [],
      joined_at: new Date().toISOString(),
      roles: [{ id: GUILD_ID, name: '@everyone', permissions: '0', position: 0, color: 0, hoist: false, managed: false, mentionable: false, flags: 0 }],
      channels: [{ id: CHANNEL_ID, type: 0, name: 'ml', guild_id: GUILD_ID, position: 0, permission_overwrites: [], nsfw: false, parent_id: null }],
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      mfa_level: 0,
      system_channel_flags: 0,
      premium_tier: 0,
      preferred_locale: 'en-US',
      nsfw_level: 0,
      premium_progress_bar_enabled: false,
    };
  }

  send(t: string, d: unknown) {
    for (const ws of this.sockets) if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ op: 0, t, s: ++this.seq, d }));
  }

  user(id: string) {
    return { id, username: `user${id.slice(-3)}`, discriminator: '0', global_name: null, avatar: null };
  }

  interaction(
    id: string,
    sub: string,
    options: { name: string; type: number; value: unknown }[] = [],
    userId = '800000000000000001',
    roles: string[] = [],
    resolved?: unknown,
    /** The asker's client language (Discord sends `zh-CN`, `zh-TW`, `en-US`, ...). */
    locale = 'en-US',
  ) {
    this.send('INTERACTION_CREATE', {
      id,
      application_id: APP_ID,
      type: 2,
      token: `tok-${id}`,
      version: 1,
      guild_id: GUILD_ID,
      channel_id: CHANNEL_ID,
      channel: { id: CHANNEL_ID, type: 0, guild_id: GUILD_ID, name: 'ml' },
      member: this.member(userId, roles),
      app_permissions: '2147483647',
      locale,
      guild_locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: { '0': GUILD_ID },
      context: 0,
      data: { id: '1', name: 'gpu', type: 1, options: [{ type: 1, name: sub, options }], ...(resolved ? { resolved } : {}) },
    });
  }

  /**
   * A slash command by its path: ['status'] is /gpu status, ['hosts', 'add'] is /gpu hosts add (a
   * subcommand group), with the leaf's options; `type` 4 makes it an autocomplete interaction, where one
   * option carries `focused: true`.
   */
  command(
    id: string,
    path: string[],
    options: { name: string; type: number; value: unknown; focused?: boolean }[] = [],
    o: { userId?: string; roles?: string[]; type?: 2 | 4 } = {},
  ) {
    const leaf = { type: 1, name: path[path.length - 1], options };
    const top = path.length === 2 ? { type: 2, name: path[0], options: [leaf] } : leaf;
    const userId = o.userId ?? '800000000000000001';
    this.send('INTERACTION_CREATE', {
      id,
      application_id: APP_ID,
      type: o.type ?? 2,
      token: `tok-${id}`,
      version: 1,
      guild_id: GUILD_ID,
      channel_id: CHANNEL_ID,
      channel: { id: CHANNEL_ID, type: 0, guild_id: GUILD_ID, name: 'ml' },
      member: this.member(userId, o.roles ?? []),
      app_permissions: '2147483647',
      locale: 'en-US',
      guild_locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: { '0': GUILD_ID },
      context: 0,
      data: { id: '1', name: 'gpu', type: 1, options: [top] },
    });
  }

  /** A guild member with every permission (interactions carry one). */
  private member(userId: string, roles: string[]) {
    return { user: this.user(userId), roles, permissions: '2147483647', joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0 };
  }

  /**
   * A click on a button of one of the bot's messages (a message component interaction, type 3):
   * `customId` as the button carries it, `messageId` the message it sits on, in `channelId` (a thread).
   */
  button(id: string, customId: string, o: { userId?: string; roles?: string[]; channelId?: string; messageId?: string } = {}) {
    const userId = o.userId ?? '800000000000000001';
    const channelId = o.channelId ?? CHANNEL_ID;
    this.send('INTERACTION_CREATE', {
      id,
      application_id: APP_ID,
      type: 3,
      token: `tok-${id}`,
      version: 1,
      guild_id: GUILD_ID,
      channel_id: channelId,
      channel: {
        id: channelId,
        type: channelId === CHANNEL_ID ? 0 : 11,
        guild_id: GUILD_ID,
        name: 'ml',
        ...(channelId === CHANNEL_ID ? {} : { parent_id: CHANNEL_ID }),
      },
      member: this.member(userId, o.roles ?? []),
      app_permissions: '2147483647',
      locale: 'en-US',
      guild_locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: { '0': GUILD_ID },
      context: 0,
      message: { ...this.message({ content: '' }, channelId), id: o.messageId ?? String(this.nextId++) },
      data: { custom_id: customId, component_type: 2 },
    });
  }

  /** The same command sent in a direct message with the bot
 (no guild, a DM channel, `user` not `member`). */
  dmInteraction(id: string, sub: string, options: { name: string; type: number; value: unknown }[] = [], userId = '800000000000000001') {
    this.send('INTERACTION_CREATE', {
      id,
      application_id: APP_ID,
      type: 2,
      token: `tok-${id}`,
      version: 1,
      channel_id: DM_CHANNEL_ID,
      channel: { id: DM_CHANNEL_ID, type: 1, recipients: [this.user(userId)] },
      user: this.user(userId),
      app_permissions: '2147483647',
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: { '1': userId },
      context: 1,
      data: { id: '1', name: 'gpu', type: 1, options: [{ type: 1, name: sub, options }] },
    });
  }

  /** A message in a direct message with the bot. */
  dmMessageCreate(id: string, content: string, attachments: unknown[] = [], author = this.user('800000000000000001')) {
    this.send('MESSAGE_CREATE', {
      id,
      channel_id: DM_CHANNEL_ID,
      channel_type: 1,
      author,
      content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments,
      embeds: [],
      pinned: false,
      type: 0,
    });
  }

  messageCreate(id: string, content: string, attachments: unknown[] = [], author = this.user('800000000000000001'), bot = false) {
    this.send('MESSAGE_CREATE', {
      id,
      channel_id: CHANNEL_ID,
      guild_id: GUILD_ID,
      author: { ...author, bot },
      member: { roles: [], joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0 },
      content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments,
      embeds: [],
      pinned: false,
      type: 0,
    });
  }

  of(re: RegExp, method?: string): RestCall[] {
    return this.calls.filter((c) => re.test(c.path) && (!method || c.method === method));
  }

  async waitFor(re: RegExp, count = 1, timeoutMs = 10000, method?: string): Promise<RestCall[]> {
    const t0 = Date.now();
    while (this.of(re, method).length < count) {
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${re}; got ${this.calls.map((c) => c.method + ' ' + c.path).join(', ')}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.of(re, method);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.terminate();
    this.wss.close();
    this.server.closeAllConnections?.();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
