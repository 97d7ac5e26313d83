// The Slack adapter (@slack/bolt): `/gpu <subcommand>` and pasted logs / shared .log files.
// Socket Mode when SLACK_APP_TOKEN is set, HTTP (Events API + slash command URL on /slack/events)
// with SLACK_SIGNING_SECRET otherwise. SLACK_API_URL points the Web API (and Socket Mode's
// apps.connections.open) somewhere else: a proxy, or the tests' fake Slack.
import { App, HTTPReceiver, SocketModeReceiver, type Logger as BoltLogger, type LogLevel } from '@slack/bolt';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebClient } from '@slack/web-api';
import { looksLikeLog } from '../../core/paste.js';
import type { Reply } from '../../core/reply.js';
import { parseCommandLine } from '../../core/invocation.js';
import {
  type AdapterDeps,
  ChannelPacer,
  FAST_COMMANDS,
  MAX_FILE_BYTES,
  TEXT_FILE,
  channelAllowed,
  downloadCapped,
  fmtBytes,
  isSlackAdmin,
  looksBinary,
  runCommand,
  Inflight,
} from '../common.js';
import { renderSlack, unescapeSlack } from './render.js';
import type { Health } from '../../ops/health.js';
import type { Metrics } from '../../ops/metrics.js';
import type { Logger } from '../../ops/logger.js';


export interface SlackEnv {
  botToken: string;
  appToken?: string;
  signingSecret?: string;
  apiUrl?: string;
  port?: number;
}

export function slackEnvFrom(env: NodeJS.ProcessEnv): SlackEnv | null {
  if (!env.SLACK_BOT_TOKEN) return null;
  if (!env.SLACK_APP_TOKEN && !env.SLACK_SIGNING_SECRET) throw new Error('SLACK_BOT_TOKEN is set but neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (HTTP mode) is');
  return {
    botToken: env.SLACK_BOT_TOKEN,
    appToken: env.SLACK_APP_TOKEN || undefined,
    signingSecret: env.SLACK_SIGNING_SECRET || undefined,
    apiUrl: env.SLACK_API_URL || undefined,
    port: env.PORT ? Number(env.PORT) : 3000,
  };
}

export interface SlackAdapterOptions extends AdapterDeps {
  env: SlackEnv;
  health?: Health;
  /** How long a command may take before the ack says "working on it" instead of carrying the answer. */
  ackBudgetMs?: number;
  maxFileBytes?: number;
  pacer?: ChannelPacer;
}

export interface SlackAdapter {
  mode: 'socket' | 'http';
  app: InstanceType<typeof App>;
  start(): Promise<void>;
  /** The HTTP port (HTTP mode), once started. */
  port(): number | undefined;
  /** Waits for in-flight replies, then disconnects. */
  stop(): Promise<void>;
  /** Posts a reply to a channel on the bot's own initiative (scheduled leak digests). */
  postToChannel(channel: string, reply: Reply): Promise<void>;
}

/** Commands that may touch SSH hosts: always acked at once, answered after. */
const SLOW = new Set(['status', 'mem', 'hosts', 'digest', 'watch']);

function boltLogger(log: Logger): BoltLogger {
  let level = 'warn' as LogLevel;
  return {
    debug: (...m: unknown[]) => log.debug({ slack: m.map(String).join(' ') }, 'bolt'),
    info: (...m: unknown[]) => log.debug({ slack: m.map(String).join(' ') }, 'bolt'),
    warn: (...m: unknown[]) => log.warn({ slack: m.map(String).join(' ') }, 'bolt'),
    error: (...m: unknown[]) => log.error({ slack: m.map((x) => (x instanceof Error ? x.message : String(x))).join(' ') }, 'bolt'),
    setLevel: (l: LogLevel) => void (level = l),
    getLevel: () => level,
    setName: () => {},
  };
}

export function createSlackAdapter(o: SlackAdapterOptions): SlackAdapter {
  const { env, logger } = o;
  const log = logger.child({ adapter: 'slack' });
  const clientOptions = env.apiUrl ? { slackApiUrl: env.apiUrl.endsWith('/') ? env.apiUrl : env.apiUrl + '/' } : {};
  const mode: 'socket' | 'http' = env.appToken ? 'socket' : 'http';
  const blog = boltLogger(log);
  let server: Server | undefined;
  const receiver =
    mode === 'socket'
      ? new SocketModeReceiver({ appToken: env.appToken!, logger: blog, installerOptions: { clientOptions } as any })
      : new HTTPReceiver({ signingSecret: env.signingSecret!, logger: blog, endpoints: ['/slack/events'], unhandledRequestTimeoutMillis: 2900 });
  const app = new App({ token: env.botToken, receiver, logger: blog, clientOptions, ignoreSelf: true });
  const pacer = o.pacer ?? new ChannelPacer(1000);
  const inflight = new Inflight();
  const track = inflight.track;
  const allowed = (channel: string, channelType?: string) => channelType === 'im' || channel.startsWith('D') || channelAllowed(o.config.channels.slack, channel);

  async function post(client: WebClient, channel: string, reply: Reply, threadTs?: string) {
    const msg = renderSlack(reply);
    await pacer.run(channel, () => client.chat.postMessage({ channel, thread_ts: threadTs, text: msg.text, blocks: msg.blocks, unfurl_links: false }));
    for (const f of msg.files) {
      await pacer.run(channel, () => client.files.uploadV2({ channel_id: channel, thread_ts: threadTs, file: f.data, filename: f.filename, title: f.filename } as any));
    }
  }

  app.command('/gpu', async ({ command, ack, client, respond }) => {
    const arrived = performance.now();
    const acked = (p: Promise<void>) => p.finally(() => o.metrics?.ackSeconds.observe({ platform: 'slack' }, (performance.now() - arrived) / 1000));
    if (!allowed(command.channel_id, command.channel_name === 'directmessage' ? 'im' : undefined)) {
      await acked(ack({ response_type: 'ephemeral', text: "I don't answer commands in this channel. Ask an admin to add it to the bot's `channels.slack` list, or DM me." }));
      return;
    }
    const line = `/gpu ${command.text ?? ''}`;
    const name = parseCommandLine(line)?.name ?? '';
    const work = track(runCommand(o, { platform: 'slack', userId: command.user_id, channelId: command.channel_id, isAdmin: isSlackAdmin(o.config, command.user_id), line }));
    // Refusals, usage errors and fast commands come back in a few ms and go in the ack itself;
    // anything still running after the budget is acked with "working on it" and posted when done.
    const budget = FAST_COMMANDS.has(name) ? 2000 : SLOW.has(name) ? Math.min(o.ackBudgetMs ?? 100, 100) : (o.ackBudgetMs ?? 150);
    const quick = await Promise.race([work, new Promise<null>((r) => setTimeout(() => r(null), budget).unref())]);
    if (quick) {
      const msg = renderSlack(quick.reply);
      if (msg.files.length === 0) {
        await acked(ack({ response_type: quick.outcome === 'ok' ? 'in_channel' : 'ephemeral', text: msg.text, blocks: msg.blocks }));
        return;
      }
    }
    await acked(ack({ response_type: 'ephemeral', text: `:hourglass_flowing_sand: Working on \`/gpu ${name}\`…` }));
    const result = await work;
    try {
      await track(post(client, command.channel_id, result.reply));
    } catch (e) {
      // Not in the channel (private channel, DM with someone else): answer through the response_url.
      log.warn({ err: (e as Error).message }, 'chat.postMessage failed; answering via response_url');
      const msg = renderSlack(result.reply);
      await respond({ response_type: 'ephemeral', text: msg.text, blocks: msg.blocks });
    }
  });

  app.event('message', async ({ event, client, context }) => {
    const m = event as any;
    if (m.bot_id || m.subtype === 'bot_message' || (m.subtype && m.subtype !== 'file_share' && m.subtype !== 'thread_broadcast')) return;
    if (!m.user || m.user === context.botUserId) return;
    if (!allowed(m.channel, m.channel_type)) return;
    const text = unescapeSlack(m.text ?? '');
    if (/^\s*\/?gpu\s/i.test(text) && !looksLikeLog(text)) return; // a command typed as text (threads): not a paste
    const notes: string[] = [];
    const bodies: string[] = [];
    if (text.trim() && looksLikeLog(text)) bodies.push(text);
    const files = (m.files ?? []).filter((f: any) => TEXT_FILE.test(f.name ?? '') || f.filetype === 'text' || f.mimetype === 'text/plain');
    for (const f of files) {
      try {
        const cap = o.maxFileBytes ?? MAX_FILE_BYTES;
        const got = await downloadCapped(f.url_private_download ?? f.url_private, { Authorization: `Bearer ${env.botToken}` }, cap, f.size);
        if (looksBinary(got.data)) {
          notes.push(`${f.name} is not a text file (binary content), so I did not read it. Share the training log as .log or .txt text.`);
          continue;
        }
        if (got.truncated) notes.push(`${f.name} is ${fmtBytes(got.totalBytes)}, over the ${fmtBytes(cap)} I read; I diagnosed its first ${fmtBytes(got.data.length)}.`);
        else notes.push(`Read ${f.name} (${fmtBytes(got.data.length)}).`);
        bodies.push(got.data.toString('utf8'));
      } catch (e) {
        notes.push(`I could not download ${f.name}: ${(e as Error).message}.`);
      }
    }
    if (bodies.length === 0 && notes.length === 0) return; // chatter
    const threadTs = m.thread_ts ?? m.ts;
    let reply: Reply;
    if (bodies.length) {
      const result = await track(runCommand(o, { platform: 'slack', userId: m.user, channelId: m.channel, isAdmin: isSlackAdmin(o.config, m.user), line: `/gpu diagnose ${bodies.join('\n')}` }));
      reply = result.reply;
      if (notes.length) reply = { ...reply, sections: [{ text: notes.join('\n') }, ...reply.sections] };
    } else {
      reply = { title: 'Nothing I could read', severity: 'warning', sections: [{ text: notes.join('\n') }] };
    }
    await track(post(client, m.channel, reply, threadTs));
  });

  app.error(async (e) => {
    log.error({ err: e.message }, 'slack handler failed');
  });

  return {
    mode,
    app,
    async start() {
      o.health?.set('slack', 'starting');
      if (mode === 'http') {
        server = (await app.start(env.port ?? 3000)) as Server;
      } else {
        await app.start();
      }
      o.health?.set('slack', 'connected');
      log.info({ mode, port: server ? (server.address() as AddressInfo).port : undefined }, 'slack adapter started');
    },
    port: () => (server ? (server.address() as AddressInfo).port : undefined),
    postToChannel: (channel, reply) => track(post(app.client, channel, reply)),
    async stop() {
      await inflight.drain();
      await app.stop().catch(() => {});
      if (server?.listening) await new Promise<void>((r) => server!.close(() => r()));
      o.health?.set('slack', 'stopped');
    },
  };
}
