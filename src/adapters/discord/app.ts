// The Discord adapter (discord.js v14): the /gpu application command and pasted logs / message.txt
// attachments in channels (Message Content intent) and DMs. DISCORD_API_URL points REST (and so the
// gateway URL from GET /gateway/bot) elsewhere: that is how the tests run the real client against fakes.
import { subscribe } from 'node:diagnostics_channel';
import { createRequire } from 'node:module';
import {
  AttachmentBuilder,
  Client,
  Events,
  GatewayIntentBits,
  MessageFlags,
  Partials,
  ThreadAutoArchiveDuration,
  type AutocompleteInteraction,
  type ChatInputCommandInteraction,
  type Message,
  type ThreadChannel,
} from 'discord.js';
import { localeFromTag, resolveLocale, t, type Locale } from '../../core/i18n.js';
import { diagnoseInvocation, pasteOf, withFileNotes, worthAnswering } from '../../core/inbound.js';
import { readingFilesReply } from '../../core/progress.js';
import type { Reply } from '../../core/reply.js';
import {
  type AdapterDeps,
  ChannelPacer,
  channelRefusal,
  dmRefusal,
  MAX_FILE_BYTES,
  channelAllowed,
  directMessagesAllowed,
  downloadCapped,
  downloadSlots,
  progressPacer,
  readAttachedFiles,
  runCommand,
  Inflight,
  type AttachedFile,
} from '../common.js';
import { renderDiscord } from './render.js';
import { isDiscordAdmin, rolesOf } from './admin.js';
import { feedbackComponents, isFeedbackButton, onFeedbackButton } from './feedback.js';
import { buildDiscordCommands, interactionInvocation, type DiscordRoute } from './commands.js';
import { cutLine } from '../render-limits.js';
import type { HostStatusResult } from '../../core/services.js';
import type { Health } from '../../ops/health.js';
import type { DiscordEnv } from './env.js';

export { discordEnvFrom, type DiscordEnv } from './env.js';

export interface DiscordAdapterOptions extends AdapterDeps {
  env: DiscordEnv;
  health?: Health;
  maxFileBytes?: number;
  pacer?: ChannelPacer;
  /** How long start-up waits for READY after login (DISCORD_READY_TIMEOUT_MS unless set). */
  readyTimeoutMs?: number;
}

export interface DiscordAdapter {
  client: Client;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Posts a reply to a channel on the bot's own initiative (scheduled leak digests). */
  postToChannel(channelId: string, reply: Reply): Promise<void>;
  /** Sends a direct message to a user (`/gpu notify`). */
  postToUser(userId: string, reply: Reply): Promise<void>;
}

/** Commands whose answer, when it is there at once, is the interaction's response itself (no host is asked). */
const QUICK = new Set(['help', 'diagnose', 'feedback', 'whoami']);
/** Commands that answer the asker alone: when not answered at once, their deferral is ephemeral too. */
const ASKER_ONLY = new Set(['help', 'feedback', 'whoami']);
/** How long start-up waits for the gateway's READY after logging in. */
const DISCORD_READY_TIMEOUT_MS = 30_000;
/** Discord drops an autocomplete answer after 3 s; the lookup gets 2 s of that. */
const AUTOCOMPLETE_DEADLINE_MS = 2000;
const AUTOCOMPLETE_MAX = 25;
/** How long a host's GPU list is reused for autocomplete (a few keystrokes ask again and again). */
const GPU_CACHE_MS = 60_000;

/** The longest a command waits for its deferral's request to be written (a new connection's handshake, an undici that does not say). */
const DEFERRAL_WRITE_WAIT_MS = 250;

/** Who waits for a request whose path holds a key to be written, keyed by that key. */
const writeWaiters = new Map<string, () => void>();
let watchingWrites = false;

/**
 * Resolves once a request whose path holds `pathPart` had its headers written to the socket (undici's
 * own diagnostics channel, which the undici of @discordjs/rest publishes), or after `ms`. Only the
 * first request of a key is waited for; nothing is read from the request but its path.
 */
function requestWritten(pathPart: string, ms: number): Promise<void> {
  if (!watchingWrites) {
    watchingWrites = true;
    subscribe('undici:client:sendHeaders', (m) => {
      const path = (m as { request?: { path?: unknown } }).request?.path;
      if (typeof path !== 'string' || writeWaiters.size === 0) return;
      for (const [key, done] of writeWaiters) if (path.includes(key)) done();
    });
  }
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      if (writeWaiters.get(pathPart) === done) writeWaiters.delete(pathPart);
      resolve();
    }
    writeWaiters.set(pathPart, done);
  });
}

/** Resolves to `fallback` when `p` takes longer than `ms` (p keeps running; its result is dropped). */
async function withDeadline<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((r) => (timer = setTimeout(() => r(fallback), ms)));
  void p.catch(() => {}); // a rejection after the deadline is not left unhandled
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** GPU indexes per host from a status answer, kept GPU_CACHE_MS; one lookup per host at a time. */
class GpuIndexCache {
  private entries = new Map<string, { at: number; gpus: Promise<{ index: number; label: string }[]> }>();
  get(host: string, status: () => Promise<HostStatusResult[]>): Promise<{ index: number; label: string }[]> {
    const hit = this.entries.get(host);
    if (hit && Date.now() - hit.at < GPU_CACHE_MS) return hit.gpus;
    const gpus = status().then((res) =>
      res.flatMap((h) =>
        h.ok
          ? h.gpus.map((g) => ({
              index: g.index,
              label: [g.name, g.memoryUsedMiB != null && g.memoryTotalMiB != null ? `${g.memoryUsedMiB}/${g.memoryTotalMiB} MiB` : null]
                .filter(Boolean)
                .join(', '),
            }))
          : [],
      ),
    );
    // A failed lookup is not cached: the next keystroke asks again.
    void gpus.catch(() => this.entries.delete(host));
    this.entries.set(host, { at: Date.now(), gpus });
    if (this.entries.size > 256) this.entries.delete(this.entries.keys().next().value!);
    return gpus;
  }
}

/** No reply of the bot ever pings anyone (@everyone, roles, users), whatever text it carries. */
const NO_MENTIONS = { parse: [] as never[], repliedUser: false };

/** A thread's name (1-100 characters, plain text): what the diagnosis found. */
function threadName(reply: Reply): string {
  const title = reply.title.replace(/[\r\n]+/g, ' ').trim();
  return cutLine(title ? `gpu-doctor: ${title}` : 'gpu-doctor diagnosis', 100);
}

function payload(reply: Reply) {
  const m = renderDiscord(reply);
  return {
    embeds: m.embeds,
    files: m.files.map((f) => new AttachmentBuilder(f.data, { name: f.filename })),
    allowedMentions: NO_MENTIONS,
    // 👍 / 👎 under a diagnosis (./feedback.ts).
    ...(reply.feedback ? { components: feedbackComponents(reply.feedback.id, reply.feedback.locale) } : {}),
  };
}

/**
 * An HTTP agent of the undici that @discordjs/rest itself uses. Without one, REST requests go through
 * undici's process-global dispatcher, and once @slack/bolt is loaded that is undici 7's Agent (it
 * installs itself under the same global symbol), with which undici 6 fails every multipart upload
 * ("action is not a function"): every Discord reply carrying a file was lost.
 */
function discordRestAgent(): unknown {
  const requireFromRest = createRequire(createRequire(import.meta.url).resolve('@discordjs/rest'));
  const { Agent } = requireFromRest('undici') as { Agent: new () => unknown };
  return new Agent();
}

export function createDiscordAdapter(o: DiscordAdapterOptions): DiscordAdapter {
  const log = o.logger.child({ adapter: 'discord' });
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages],
    partials: [Partials.Channel],
    rest: { agent: discordRestAgent() as never, ...(o.env.apiUrl ? { api: o.env.apiUrl.replace(/\/$/, '') } : {}) },
  });
  const pacer = o.pacer ?? new ChannelPacer(1000);
  const inflight = new Inflight();
  const track = inflight.track;
  const cap = o.maxFileBytes ?? MAX_FILE_BYTES;
  // No guild = a direct message with the bot: DMs follow channels.allow_dms, guilds the allow-list.
  const dmsAllowed = directMessagesAllowed(o.config, 'discord');
  const allowed = (guildId: string | null, channelId: string) => (guildId ? channelAllowed(o.config.channels.discord, channelId, guildId) : dmsAllowed);

  // The same definitions the registration script sends: every command in the registry, no Discord list.
  const commandSet = buildDiscordCommands(o.registry.list());
  const gpuIndexes = new GpuIndexCache();

  const readFiles = (files: AttachedFile[], loc?: Locale) => readAttachedFiles(files, (f, maxBytes) => downloadCapped(f.url, {}, maxBytes, f.size), cap, loc);

  async function onCommand(i: ChatInputCommandInteraction) {
    if (!allowed(i.guildId, i.channelId)) {
      const loc = resolveLocale(o.config.locale, i.channelId, localeFromTag(i.locale));
      const why = i.guildId ? channelRefusal(loc, 'channels.discord', false) : dmRefusal(loc);
      await i.reply({ content: why, flags: MessageFlags.Ephemeral, allowedMentions: NO_MENTIONS });
      return;
    }
    const route = commandSet.route(i.options.getSubcommandGroup(false), i.options.getSubcommand(false));
    if (!route) {
      // Discord still shows a subcommand this version no longer has: the registration is out of date.
      await i.reply({
        content: 'This /gpu command is not one I know any more. Ask an admin to run `npm run discord:register`.',
        flags: MessageFlags.Ephemeral,
        allowedMentions: NO_MENTIONS,
      });
      return;
    }
    const built = interactionInvocation(route, (n) => i.options.get(n)?.value);
    if ('problem' in built) {
      await i.reply({ content: built.problem, flags: MessageFlags.Ephemeral, allowedMentions: NO_MENTIONS });
      return;
    }
    const file = route.file ? i.options.getAttachment(route.file) : null;
    // A long command's interim replies edit the deferred reply ("gpu-doctor is thinking…"), deferring it
    // first if that has not happened yet; after a failed edit no more progress is shown.
    let deferral: Promise<unknown> | null = null;
    const toAskerOnly = !file && ASKER_ONLY.has(route.command);
    const defer = () => (deferral ??= toAskerOnly ? i.deferReply({ flags: MessageFlags.Ephemeral }) : i.deferReply());
    let progressBroken = false;
    const showProgress = async (reply: Reply) => {
      if (progressBroken) return;
      try {
        await defer();
        await i.editReply({ embeds: renderDiscord(reply).embeds, allowedMentions: NO_MENTIONS });
      } catch (e) {
        progressBroken = true;
        throw e;
      }
    };
    const progress = progressPacer(o, 'discord', showProgress);
    const quick = !file && QUICK.has(route.command);
    // The response (answer, refusal or deferral) settled: the command's audit row is written only then.
    let ackLeft = () => {};
    const responded = new Promise<void>((r) => (ackLeft = r));
    // Once the checks passed, a command that is not answered at once is deferred before it runs (the
    // registry's beforeRun), and runs once the deferral's request is on the wire, so none of its own work
    // (a chart's child, a store read, a host connection) holds the thread before the ack is sent. Its
    // response is not awaited (that would delay every command by a round trip): the answer edits the
    // deferred reply after the deferral resolved (`await defer()` below), where a failed deferral is
    // found too. One macrotask was not enough: discord.js's REST wrote the request after the second.
    const deferFirst = async () => {
      const written = requestWritten(`/interactions/${i.id}/`, DEFERRAL_WRITE_WAIT_MS);
      await Promise.race([written, defer().catch(() => {})]);
    };
    if (file)
      void progress.update(readingFilesReply([{ name: file.name, size: file.size }], resolveLocale(o.config.locale, i.channelId, localeFromTag(i.locale))));
    const answer = async (): Promise<{ reply: Reply; ok: boolean }> => {
      const read = file
        ? await readFiles([{ name: file.name, url: file.url, size: file.size }], resolveLocale(o.config.locale, i.channelId, localeFromTag(i.locale)))
        : { files: [], notes: [] };
      const isAdmin = isDiscordAdmin(o.config, i.user.id, rolesOf(i.member));
      const result = await runCommand(o, {
        platform: 'discord',
        userId: i.user.id,
        channelId: i.channelId,
        isAdmin,
        // The attached log's bytes go with the typed options; the command decodes them.
        command: read.files.length ? { ...built.invocation, files: read.files } : built.invocation,
        progress,
        userLocale: localeFromTag(i.locale),
        ...(quick ? {} : { beforeRun: deferFirst }),
        ackSent: responded,
      });
      return { reply: withFileNotes(result.reply, read.notes), ok: result.outcome === 'ok' };
    };
    // An attachment's download and diagnosis hold a process-wide slot (bounded memory under bursts).
    const work = track(file ? downloadSlots.run(answer) : answer());
    // The response (Discord's ack, due within 3 s) waits for no work: refusals and usage errors found
    // at once are the response itself, ephemeral so only the asker sees them, and so is a quick
    // command's answer when it is already there; everything else is deferred ("gpu-doctor is
    // thinking...", only for the asker when the command answers the asker alone) and edited in.
    try {
      const early = await Promise.race([work, new Promise<null>((r) => setImmediate(r, null))]);
      if (early && !deferral && (quick || !early.ok)) {
        const askerOnly = !early.ok || early.reply.visibility === 'asker';
        await i.reply({ ...payload(early.reply), ...(askerOnly ? { flags: MessageFlags.Ephemeral as const } : {}) });
        return;
      }
      await defer();
    } finally {
      ackLeft();
    }
    const { reply, ok } = await work;
    if (toAskerOnly || (ok && reply.visibility !== 'asker')) {
      try {
        await i.editReply(payload(reply));
      } catch (e) {
        // The answer is never lost to a failed edit: it goes as a message of its own.
        log.warn({ err: (e as Error).message }, 'could not edit the deferred reply; answering in a follow-up');
        await i.followUp(payload(reply));
      }
      return;
    }
    // A deferred reply is public; a refusal, usage error or asker-only answer found late goes to the asker alone.
    try {
      await i.deleteReply();
    } catch (e) {
      log.warn({ err: (e as Error).message }, 'could not delete the deferred reply; answering in it');
      await i.editReply(payload(reply));
      return;
    }
    await i.followUp({ ...payload(reply), flags: MessageFlags.Ephemeral });
  }

  /** Host names from the host registry, or GPU indexes of the host already chosen; at most 25, by prefix. */
  async function completions(
    route: DiscordRoute,
    focused: { name: string; value: string },
    get: (name: string) => unknown,
  ): Promise<{ name: string; value: string | number }[]> {
    const arg = route.args.find((a) => a.name === focused.name);
    const hosts = o.services.hosts;
    if (!arg?.completion || !hosts) return [];
    const typed = String(focused.value ?? '');
    if (arg.completion === 'host') {
      // A list of hosts (status a b c): complete the last word, keep the ones before it.
      const words = arg.variadic ? typed.split(/\s+/) : [typed];
      const last = (words.pop() ?? '').toLowerCase();
      const before = words.filter(Boolean);
      const names = (await hosts.list()).map((h) => h.name).filter((n) => n.toLowerCase().startsWith(last) && !before.includes(n));
      return names.slice(0, AUTOCOMPLETE_MAX).map((n) => {
        const value = [...before, n].join(' ');
        return { name: cutLine(value, 100), value: value.slice(0, 100) };
      });
    }
    const host = get('host') ?? get('name');
    if (typeof host !== 'string' || host === '') return [];
    const gpus = await gpuIndexes.get(host, () => hosts.status([host]));
    return gpus
      .filter((g) => String(g.index).startsWith(typed.trim()))
      .slice(0, AUTOCOMPLETE_MAX)
      .map((g) => ({ name: cutLine(`${g.index}${g.label ? ': ' + g.label : ''}`, 100), value: arg.value.type === 'string' ? String(g.index) : g.index }));
  }

  async function onAutocomplete(i: AutocompleteInteraction) {
    let choices: { name: string; value: string | number }[] = [];
    try {
      const route = commandSet.route(i.options.getSubcommandGroup(false), i.options.getSubcommand(false));
      const focused = i.options.getFocused(true);
      if (route && allowed(i.guildId, i.channelId)) {
        choices = await withDeadline(
          completions(route, { name: focused.name, value: String(focused.value) }, (n) => i.options.get(n)?.value),
          AUTOCOMPLETE_DEADLINE_MS,
          [],
        );
      }
    } catch (e) {
      // An unknown or missing focused option, a host registry error: answer with no choices, never crash.
      log.warn({ err: (e as Error).message }, 'autocomplete failed');
    }
    await i.respond(choices);
  }

  /**
   * A pasted log's diagnosis goes in a thread started on that message, as on Slack, so the channel keeps
   * one line per paste. In a thread already, or a DM (no threads), or where the bot may not start one
   * (missing Create Public Threads), it is a reply to the message instead.
   */
  async function answerInThread(m: Message, reply: Reply, body: Parameters<Message['reply']>[0] & Parameters<ThreadChannel['send']>[0] = payload(reply)) {
    if (!m.guildId || m.channel.isThread() || !m.channel.isTextBased()) return m.reply(body);
    try {
      const thread = await m.startThread({ name: threadName(reply), autoArchiveDuration: ThreadAutoArchiveDuration.OneDay });
      return await thread.send(body);
    } catch (e) {
      log.warn({ err: (e as Error).message, channel: m.channelId }, 'could not answer in a thread; replying to the message');
      return m.reply(body);
    }
  }

  async function onMessage(m: Message) {
    if (m.author.bot || m.author.id === client.user?.id || m.webhookId) return;
    if (!allowed(m.guildId, m.channelId)) {
      // Someone wrote to the bot directly: say why there is no answer. Other channels stay silent.
      if (!m.guildId)
        await pacer.run(m.channelId, () =>
          m.reply({ content: dmRefusal(resolveLocale(o.config.locale, m.channelId, undefined)), allowedMentions: NO_MENTIONS }),
        );
      return;
    }
    const text = m.content ?? '';
    // What is worth a diagnosis (a paste, text files, message.txt only when it reads like a log): core/inbound.ts.
    const paste = pasteOf(
      text,
      [...m.attachments.values()].map((a) => ({ name: a.name, mimeType: a.contentType ?? undefined, url: a.url, size: a.size })),
    );
    if (!paste) return;
    const files = paste.files;
    // Progress (reading the files, reading a host the log names) goes where the answer will go: a thread
    // started on the message (named for the progress, renamed for the diagnosis) or a reply, edited into
    // the answer. After a failed post or edit no more progress is shown.
    let progressMessage: Message | null = null;
    let progressBroken = false;
    const showProgress = async (reply: Reply) => {
      if (progressBroken) return;
      const body = { embeds: renderDiscord(reply).embeds, allowedMentions: NO_MENTIONS };
      try {
        if (progressMessage) await progressMessage.edit(body);
        else progressMessage = await pacer.run(m.channelId, () => answerInThread(m, reply, body));
      } catch (e) {
        progressBroken = true;
        throw e;
      }
    };
    const progress = progressPacer(o, 'discord', showProgress);
    // A message carries no locale of its author: the channel's (config) or the server's language stands in for it.
    const loc = resolveLocale(o.config.locale, m.channelId, localeFromTag(m.guild?.preferredLocale));
    if (files.length)
      void progress.update(
        readingFilesReply(
          files.map((a) => ({ name: a.name, size: a.size })),
          loc,
        ),
      );
    const answer = async (): Promise<Reply | null> => {
      const read = await readFiles(files, loc);
      if (!paste.pasted && read.files.length === 0)
        return { title: t(loc, 'adapter.nothingRead.title'), severity: 'warning', sections: [{ text: read.notes.join('\n') }] };
      if (!worthAnswering(paste, read.files)) return null;
      const isAdmin = isDiscordAdmin(o.config, m.author.id, rolesOf(m.member));
      const result = await runCommand(o, {
        platform: 'discord',
        userId: m.author.id,
        channelId: m.channelId,
        isAdmin,
        command: diagnoseInvocation(paste.pasted ? text : null, read.files),
        progress,
        // A message carries no locale of its author: the server's language stands in for it.
        userLocale: localeFromTag(m.guild?.preferredLocale),
      });
      return withFileNotes(result.reply, read.notes);
    };
    // Downloads and their diagnosis hold a process-wide slot, so a burst of files cannot fill memory.
    const reply = files.length ? await downloadSlots.run(answer) : await answer();
    await progress.finish(); // when no command ran, a "reading" message shown is still replaced below
    if (progressMessage) await replaceProgress(m, progressMessage, reply);
    else if (reply) await pacer.run(m.channelId, () => answerInThread(m, reply));
  }

  /** The answer in place of the progress message (a new message if the edit fails); the thread renamed for it. */
  async function replaceProgress(m: Message, shown: Message, reply: Reply | null) {
    if (!reply) {
      // Read, and not a log after all: the progress goes (with the thread started for it), as no reply
      // would have come.
      const where = shown.channel;
      const gone: Promise<unknown> = where.isThread() && where.id === m.id ? where.delete() : shown.delete();
      await gone.catch((e: unknown) => log.warn({ err: (e as Error).message }, 'could not delete the progress message'));
      return;
    }
    try {
      await shown.edit(payload(reply));
    } catch (e) {
      log.warn({ err: (e as Error).message }, 'could not edit the progress message; answering in a new one');
      const where = shown.channel;
      await pacer.run(m.channelId, async () => void (where.isSendable() ? await where.send(payload(reply)) : await m.reply(payload(reply))));
      return;
    }
    // A thread started on the message (it takes the message's id) was named for the progress.
    const thread = shown.channel;
    if (thread.isThread() && thread.id === m.id)
      await thread.setName(threadName(reply)).catch((e: unknown) => log.warn({ err: (e as Error).message }, 'could not rename the thread'));
  }

  client.on(Events.InteractionCreate, (i) => {
    if (i.isButton() && isFeedbackButton(i.customId)) {
      track(onFeedbackButton(i, o, isDiscordAdmin(o.config, i.user.id, rolesOf(i.member)))).catch((e) =>
        log.error({ err: (e as Error).message }, 'feedback button failed'),
      );
      return;
    }
    if (i.isAutocomplete() && i.commandName === 'gpu') {
      track(onAutocomplete(i)).catch((e) => log.error({ err: (e as Error).message }, 'autocomplete failed'));
      return;
    }
    if (!i.isChatInputCommand() || i.commandName !== 'gpu') return;
    track(onCommand(i)).catch((e) => log.error({ err: (e as Error).message }, 'interaction failed'));
  });
  client.on(Events.MessageCreate, (m) => {
    track(onMessage(m)).catch((e) => log.error({ err: (e as Error).message }, 'message handling failed'));
  });
  client.on(Events.ShardDisconnect, () => o.health?.set('discord', 'disconnected'));
  client.on(Events.ShardResume, () => o.health?.set('discord', 'connected'));
  client.on(Events.Error, (e) => log.error({ err: e.message }, 'discord client error'));

  return {
    client,
    async start() {
      o.health?.set('discord', 'starting');
      // Start-up waits for READY, but not for ever: a gateway that never sends it is one clear error.
      let timer: NodeJS.Timeout | undefined;
      const readyMs = o.readyTimeoutMs ?? DISCORD_READY_TIMEOUT_MS;
      const ready = new Promise<void>((resolve, reject) => {
        client.once(Events.ClientReady, () => resolve());
        timer = setTimeout(() => reject(new Error(`Discord did not send READY within ${readyMs / 1000} s of login`)), readyMs);
      });
      try {
        // login itself waits for the gateway: whichever fails first (REST, or no READY in time) is thrown.
        await Promise.all([client.login(o.env.token), ready]);
      } catch (e) {
        // Not awaited: a client still waiting for READY does not finish destroying (discord.js).
        void client.destroy().catch(() => {});
        throw e;
      } finally {
        clearTimeout(timer);
      }
      o.health?.set('discord', 'connected');
      log.info({ user: client.user?.id }, 'discord adapter started');
    },
    async postToChannel(channelId, reply) {
      const channel = await client.channels.fetch(channelId);
      if (!channel || !channel.isSendable()) throw new Error(`cannot post to Discord channel ${channelId}`);
      await channel.send(payload(reply));
    },
    async postToUser(userId, reply) {
      const user = await client.users.fetch(userId);
      await user.send(payload(reply));
    },
    async stop() {
      await inflight.drain();
      await client.destroy();
      o.health?.set('discord', 'stopped');
    },
  };
}
