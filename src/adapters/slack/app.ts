// The Slack adapter (@slack/bolt): `/gpu <subcommand>` and pasted logs / shared .log files.
// Socket Mode when SLACK_APP_TOKEN is set, HTTP (Events API + slash command URL on /slack/events)
// with SLACK_SIGNING_SECRET otherwise. SLACK_API_URL points the Web API (and Socket Mode's
// apps.connections.open) somewhere else: a proxy, or the tests' fake Slack.
import { App, HTTPReceiver, SocketModeReceiver, webApi, type Logger as BoltLogger, type LogLevel } from '@slack/bolt';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebClient } from '@slack/web-api';
import { diagnoseInvocation, pasteOf, withFileNotes, worthAnswering } from '../../core/inbound.js';
import type { Reply } from '../../core/reply.js';
import { invocationOf } from '../../core/invocation.js';
import { readingFilesReply } from '../../core/progress.js';
import {
  type AdapterDeps,
  ChannelPacer,
  channelRefusal,
  dmRefusal,
  FAST_COMMANDS,
  MAX_FILE_BYTES,
  channelAllowed,
  directMessagesAllowed,
  downloadCapped,
  downloadSlots,
  progressPacer,
  readAttachedFiles,
  runCommand,
  slackFileHosts,
  Inflight,
} from '../common.js';
import type { DispatchOutcome } from '../../core/registry.js';
import { renderSlack, unescapeSlack, type SlackMessage } from './render.js';
import { handleFeedbackActions } from './feedback.js';
import { isSlackAdmin } from './admin.js';
import { slackUserLocales } from './locale.js';
import { resolveLocale, t } from '../../core/i18n.js';
import type { Health } from '../../ops/health.js';
import type { Logger } from '../../ops/logger.js';
import type { SlackEnv } from './env.js';

export { slackEnvFrom, type SlackEnv } from './env.js';

export interface SlackAdapterOptions extends AdapterDeps {
  env: SlackEnv;
  health?: Health;
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

/** The fields of a Slack message event (and its shared files) that this adapter reads. */
interface SlackMessageEvent {
  user?: string;
  channel: string;
  channel_type?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  bot_id?: string;
  subtype?: string;
  files?: { name?: string; filetype?: string; mimetype?: string; url_private?: string; url_private_download?: string; size?: number }[];
}

/** How long start-up waits for Slack: the auth.test check, then the Socket Mode connection. */
const SLACK_CONNECT_TIMEOUT_MS = 30_000;

const quietLogger: BoltLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => 'error' as LogLevel,
  setName: () => {},
};

/**
 * Asks Slack who the bot token is (auth.test) once, without retries, before Bolt starts: an unreachable
 * Slack or a refused token is one clear error at start-up, not Bolt's retries logging a warning each
 * for half an hour while the bot seems to run.
 */
async function checkSlack(env: SlackEnv, apiUrl: string | undefined): Promise<void> {
  const where = apiUrl ?? 'https://slack.com/api/';
  const probe = new webApi.WebClient(env.botToken, {
    ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
    retryConfig: { retries: 0 },
    timeout: SLACK_CONNECT_TIMEOUT_MS,
    logger: quietLogger,
  });
  try {
    await probe.auth.test();
  } catch (e) {
    const err = e as {
      code?: string;
      data?: { error?: string };
      statusCode?: number;
      original?: { message?: string; cause?: { code?: string; message?: string } };
      message?: string;
    };
    if (err.code === webApi.ErrorCode.PlatformError)
      throw new Error(`Slack refused SLACK_BOT_TOKEN (${err.data?.error ?? 'error'}): use the Bot User OAuth Token (xoxb-...) of the installed app`, {
        cause: e,
      });
    const reason =
      err.code === webApi.ErrorCode.HTTPError
        ? `HTTP ${err.statusCode}`
        : [err.original?.message, err.original?.cause?.code ?? err.original?.cause?.message].filter(Boolean).join(': ') || (err.message ?? String(e));
    throw new Error(`cannot reach Slack at ${where} (${reason}): check the network, a proxy, or SLACK_API_URL; the bot did not start`, { cause: e });
  }
}

/** `p`, or an error naming what did not happen within `ms`. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
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
      ? new SocketModeReceiver({ appToken: env.appToken!, logger: blog, installerOptions: { clientOptions } })
      : new HTTPReceiver({ signingSecret: env.signingSecret!, logger: blog, endpoints: ['/slack/events'], unhandledRequestTimeoutMillis: 2900 });
  // Initialised in start(), after checkSlack: constructing the App would call auth.test itself, with
  // Bolt's retries (a warning each) and a rejection nobody awaits when Slack cannot be reached.
  const app = new App({ token: env.botToken, receiver, logger: blog, clientOptions, ignoreSelf: true, deferInitialization: true });
  const pacer = o.pacer ?? new ChannelPacer(1000);
  const inflight = new Inflight();
  const track = inflight.track;
  // A direct message is one with the bot: channel type "im" (events), "directmessage" (slash commands),
  // or a D... channel ID. DMs follow channels.allow_dms, every other channel the allow-list.
  const isDirect = (channel: string, channelType?: string) => channelType === 'im' || channel.startsWith('D');
  const dmsAllowed = directMessagesAllowed(o.config, 'slack');
  const allowed = (channel: string, channelType?: string) => (isDirect(channel, channelType) ? dmsAllowed : channelAllowed(o.config.channels.slack, channel));
  // The bot token goes with every download, so files come only from Slack's file host (and the
  // SLACK_API_URL origin the token already goes to), every redirect hop checked.
  const fileHosts = { test: slackFileHosts(env.apiUrl), name: "Slack's file host (files.slack.com)" };

  async function post(client: WebClient, channel: string, reply: Reply, threadTs?: string) {
    const msg = renderSlack(reply);
    const sent = await pacer.run(channel, () =>
      client.chat.postMessage({ channel, thread_ts: threadTs, text: msg.text, blocks: msg.blocks, unfurl_links: false }),
    );
    // Posted to a user id (a direct message), Slack answers with the DM's own channel id: the files go
    // there, since a file upload takes only a conversation id.
    await uploadFiles(client, typeof sent.channel === 'string' && sent.channel ? sent.channel : channel, msg.files, threadTs);
  }

  async function uploadFiles(client: WebClient, channel: string, files: SlackMessage['files'], threadTs?: string) {
    for (const f of files) {
      await pacer.run(channel, () =>
        threadTs
          ? client.files.uploadV2({ channel_id: channel, thread_ts: threadTs, file: f.data, filename: f.filename, title: f.filename })
          : client.files.uploadV2({ channel_id: channel, file: f.data, filename: f.filename, title: f.filename }),
      );
    }
  }

  /**
   * One message that shows a long command's progress: the first interim reply is posted, later ones
   * and the answer edit it (chat.update, same ts). The registry paces the calls; after a failed post
   * or edit no more progress is shown, and the answer is posted as a new message if its edit fails.
   */
  function liveMessage(client: WebClient, channel: string, threadTs?: string) {
    let ts: string | undefined;
    let broken = false;
    let shown = false;
    return {
      /** From now on interim replies are shown. */
      open: () => void (shown = true),
      /** Whether a progress message was posted (the answer then goes in its place). */
      posted: () => ts !== undefined,
      show: async (reply: Reply) => {
        if (broken || !shown) return;
        const msg = renderSlack(reply);
        try {
          if (ts) await client.chat.update({ channel, ts, text: msg.text, blocks: msg.blocks });
          else
            ts = (
              await pacer.run(channel, () => client.chat.postMessage({ channel, thread_ts: threadTs, text: msg.text, blocks: msg.blocks, unfurl_links: false }))
            ).ts;
        } catch (e) {
          broken = true;
          throw e;
        }
      },
      /** Puts the answer in place of the progress, or posts it when nothing was shown (or the edit fails). */
      answer: async (reply: Reply) => {
        if (!ts) return post(client, channel, reply, threadTs);
        const msg = renderSlack(reply);
        try {
          await client.chat.update({ channel, ts, text: msg.text, blocks: msg.blocks });
        } catch (e) {
          log.warn({ err: (e as Error).message }, 'chat.update of the progress message failed; posting the answer instead');
          return post(client, channel, reply, threadTs);
        }
        await uploadFiles(client, channel, msg.files, threadTs);
      },
      /** No answer after all (what was read is chatter): the progress shown goes, as no reply would have come. */
      withdraw: async () => {
        if (!ts) return;
        await client.chat.delete({ channel, ts }).catch((e: unknown) => log.warn({ err: (e as Error).message }, 'could not delete the progress message'));
      },
    };
  }

  // The asker's language (users.info include_locale), looked up once per user and cached.
  const userLocale = slackUserLocales();

  app.command('/gpu', async ({ command, ack, client, respond }) => {
    const arrived = performance.now();
    const acked = (p: Promise<void>) => p.finally(() => o.metrics?.ackSeconds.observe({ platform: 'slack' }, (performance.now() - arrived) / 1000));
    const channelType = command.channel_name === 'directmessage' ? 'im' : undefined;
    // The asker's language, asked of Slack at once (cached; at most the lookup's timeout) for the
    // answer. The ack waits for nothing: it speaks the language known by now (else the channel's).
    const askerLocale = userLocale(client, command.user_id);
    const ackLocale = () => resolveLocale(o.config.locale, command.channel_id, userLocale.known(command.user_id));
    if (!allowed(command.channel_id, channelType)) {
      const loc = ackLocale();
      const why = isDirect(command.channel_id, channelType) ? dmRefusal(loc) : channelRefusal(loc, 'channels.slack', dmsAllowed);
      await acked(ack({ response_type: 'ephemeral', text: why }));
      return;
    }
    // Slack sends what was typed after /gpu: tokenised here, once; the registry gets it split.
    const invocation = invocationOf(`/gpu ${command.text ?? ''}`) ?? { command: '', options: {}, text: '' };
    const name = invocation.command;
    // A long command's progress goes in one public message, posted once the ack said "working on it".
    const live = liveMessage(client, command.channel_id, undefined);
    // A command other than help runs once the ack has left: its checks' refusals still come in time to
    // be the ack, but nothing it does itself (a chart's child process, a store read, connecting to a
    // host) runs between the request and the ack. Every command's audit row is written after the ack too.
    let ackLeft = () => {};
    const ackGone = new Promise<void>((r) => (ackLeft = r));
    const work = track(
      askerLocale.then((locale) =>
        runCommand(o, {
          platform: 'slack',
          userId: command.user_id,
          channelId: command.channel_id,
          isAdmin: isSlackAdmin(o.config, command.user_id),
          command: invocation,
          progress: progressPacer(o, 'slack', live.show),
          userLocale: locale,
          ...(FAST_COMMANDS.has(name) ? {} : { beforeRun: () => ackGone }),
          ackSent: ackGone,
        }),
      ),
    );
    const inChannel = (r: DispatchOutcome) => r.outcome === 'ok' && r.reply.visibility !== 'asker';
    // The ack waits for no work (Slack drops a command unacked within 3 s, and a busy bot must not
    // come near that): an answer that is already there (a refusal, a usage error, help for an asker
    // whose language is known) goes in the ack itself; anything else is acked now and answered after.
    const ready = await Promise.race([work, new Promise<null>((r) => setImmediate(r, null))]);
    if (ready) {
      const msg = renderSlack(ready.reply);
      if (msg.files.length === 0) {
        try {
          await acked(ack({ response_type: inChannel(ready) ? 'in_channel' : 'ephemeral', text: msg.text, blocks: msg.blocks }));
        } finally {
          ackLeft();
        }
        return;
      }
    }
    // Commands that answer at once (help) get an empty ack and their answer through the response_url;
    // the rest say "working on it", and post the answer (with its progress) when done.
    try {
      if (FAST_COMMANDS.has(name)) await acked(ack());
      else {
        await acked(ack({ response_type: 'ephemeral', text: `:hourglass_flowing_sand: ${t(ackLocale(), 'adapter.working', { name })}` }));
        live.open();
      }
    } finally {
      ackLeft();
    }
    const result = await work;
    const msg = renderSlack(result.reply);
    try {
      // A refusal or an answer meant for the asker alone, with no progress message to replace, goes
      // to the asker only, as it would have in the ack.
      if (msg.files.length === 0 && (FAST_COMMANDS.has(name) || (!inChannel(result) && !live.posted())))
        await track(respond({ response_type: inChannel(result) ? 'in_channel' : 'ephemeral', text: msg.text, blocks: msg.blocks }));
      else await track(live.answer(result.reply));
    } catch (e) {
      // Not in the channel (private channel, DM with someone else): answer through the response_url.
      log.warn({ err: (e as Error).message }, 'chat.postMessage failed; answering via response_url');
      await respond({ response_type: 'ephemeral', text: msg.text, blocks: msg.blocks });
    }
  });

  app.event('message', async ({ event, client, context }) => {
    const m = event as unknown as SlackMessageEvent;
    if (m.bot_id || m.subtype === 'bot_message' || (m.subtype && m.subtype !== 'file_share' && m.subtype !== 'thread_broadcast')) return;
    const user = m.user;
    if (!user || user === context.botUserId) return;
    const threadTs = m.thread_ts ?? m.ts;
    if (!allowed(m.channel, m.channel_type)) {
      // Someone wrote to the bot directly: say why there is no answer. Other channels stay silent.
      if (isDirect(m.channel, m.channel_type))
        await track(
          userLocale(client, user).then((locale) => {
            const loc = resolveLocale(o.config.locale, m.channel, locale);
            return post(client, m.channel, { title: t(loc, 'adapter.dmOff.title'), severity: 'warning', sections: [{ text: dmRefusal(loc) }] });
          }),
        );
      return;
    }
    const text = unescapeSlack(m.text ?? '');
    // What is worth a diagnosis (a paste, text files; a command typed as text in a thread is not): core/inbound.ts.
    const paste = pasteOf(
      text,
      (m.files ?? []).map((f) => ({
        name: f.name ?? 'file',
        mimeType: f.mimetype,
        platformText: f.filetype === 'text',
        url: f.url_private_download ?? f.url_private ?? '',
        size: Number(f.size) || 0,
      })),
    );
    if (!paste) return; // chatter
    const cap = o.maxFileBytes ?? MAX_FILE_BYTES;
    const auth = { Authorization: `Bearer ${env.botToken}` };
    const attached = paste.files;
    // Progress (reading the files, reading a host the log names) goes in one message in the thread,
    // which the diagnosis then replaces.
    const live = liveMessage(client, m.channel, threadTs);
    live.open();
    const progress = progressPacer(o, 'slack', live.show);
    // Shown at once: in the channel's language (config) or the default; the asker's own is looked up meanwhile.
    if (attached.length) void progress.update(readingFilesReply(attached, resolveLocale(o.config.locale, m.channel, undefined)));
    const answer = async (): Promise<Reply | null> => {
      const loc = resolveLocale(o.config.locale, m.channel, await userLocale(client, user));
      const { files, notes } = await readAttachedFiles(attached, (f, maxBytes) => downloadCapped(f.url, auth, maxBytes, f.size, fileHosts), cap, loc);
      if (!paste.pasted && files.length === 0)
        return {
          title: t(loc, 'adapter.nothingRead.title'),
          severity: 'warning',
          sections: [{ text: notes.join('\n') }],
        };
      if (!worthAnswering(paste, files)) return null;
      const result = await track(
        runCommand(o, {
          platform: 'slack',
          userId: user,
          channelId: m.channel,
          isAdmin: isSlackAdmin(o.config, user),
          command: diagnoseInvocation(paste.pasted ? text : null, files),
          progress,
          userLocale: await userLocale(client, user),
        }),
      );
      return withFileNotes(result.reply, notes);
    };
    // Downloads and their diagnosis hold a process-wide slot, so a burst of files cannot fill memory.
    const reply = attached.length ? await downloadSlots.run(answer) : await answer();
    await progress.finish(); // when no command ran (nothing readable), the "reading" message is still replaced
    if (reply) await track(live.answer(reply));
    else await track(live.withdraw());
  });

  // 👍 / 👎 under diagnoses (block_actions).
  handleFeedbackActions(app, o, track, log, userLocale);

  app.error((e) => {
    log.error({ err: e.message }, 'slack handler failed');
    return Promise.resolve();
  });

  return {
    mode,
    app,
    async start() {
      o.health?.set('slack', 'starting');
      await checkSlack(env, clientOptions.slackApiUrl);
      await within(app.init(), SLACK_CONNECT_TIMEOUT_MS, 'Slack did not answer auth.test');
      if (mode === 'http') {
        server = await app.start(env.port ?? 3000);
      } else {
        const connecting = app.start();
        try {
          await within(connecting, SLACK_CONNECT_TIMEOUT_MS, 'Slack Socket Mode did not connect');
        } catch (e) {
          void connecting.catch(() => {}); // its own failure, after we gave up, is not unhandled
          await app.stop().catch(() => {});
          throw e;
        }
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
