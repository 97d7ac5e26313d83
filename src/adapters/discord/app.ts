// The Discord adapter (discord.js v14): the /gpu application command and pasted logs / message.txt
// attachments in channels (Message Content intent) and DMs. DISCORD_API_URL points REST (and so the
// gateway URL from GET /gateway/bot) elsewhere: that is how the tests run the real client against fakes.
import { createRequire } from 'node:module';
import { AttachmentBuilder, Client, Events, GatewayIntentBits, MessageFlags, Partials, type ChatInputCommandInteraction, type Message } from 'discord.js';
import { looksLikeLog } from '../../core/paste.js';
import type { Reply } from '../../core/reply.js';
import {
  type AdapterDeps,
  ChannelPacer,
  DM_REFUSAL,
  MAX_FILE_BYTES,
  TEXT_FILE,
  channelAllowed,
  directMessagesAllowed,
  downloadCapped,
  downloadSlots,
  isDiscordAdmin,
  readAttachedFiles,
  runCommand,
  Inflight,
  type AttachedFile,
} from '../common.js';
import { renderDiscord } from './render.js';
import { interactionLine } from './commands.js';
import type { Health } from '../../ops/health.js';
import type { DiscordEnv } from '../adapter-env.js';

export { discordEnvFrom, type DiscordEnv } from '../adapter-env.js';

export interface DiscordAdapterOptions extends AdapterDeps {
  env: DiscordEnv;
  health?: Health;
  maxFileBytes?: number;
  pacer?: ChannelPacer;
}

export interface DiscordAdapter {
  client: Client;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Posts a reply to a channel on the bot's own initiative (scheduled leak digests). */
  postToChannel(channelId: string, reply: Reply): Promise<void>;
}

const QUICK = new Set(['help']);

/** No reply of the bot ever pings anyone (@everyone, roles, users), whatever text it carries. */
const NO_MENTIONS = { parse: [] as never[], repliedUser: false };

function payload(reply: Reply) {
  const m = renderDiscord(reply);
  return {
    embeds: m.embeds,
    files: m.files.map((f) => new AttachmentBuilder(f.data, { name: f.filename })),
    allowedMentions: NO_MENTIONS,
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
  const rolesOf = (member: unknown): string[] => {
    const m = member as { roles?: string[] | { cache?: Map<string, unknown> }; _roles?: string[] } | null;
    if (!m?.roles) return [];
    if (Array.isArray(m.roles)) return m.roles; // raw API member (guild not cached)
    if (Array.isArray(m._roles)) return m._roles; // GuildMember: role IDs as sent, cached or not
    return m.roles.cache ? [...m.roles.cache.keys()] : [];
  };

  const readFiles = (files: AttachedFile[]) => readAttachedFiles(files, (f, maxBytes) => downloadCapped(f.url, {}, maxBytes, f.size), cap);

  async function onCommand(i: ChatInputCommandInteraction) {
    if (!allowed(i.guildId, i.channelId)) {
      const why = i.guildId ? "I don't answer commands in this channel. Ask an admin to add it to the bot's `channels.discord` list." : DM_REFUSAL;
      await i.reply({ content: why, flags: MessageFlags.Ephemeral, allowedMentions: NO_MENTIONS });
      return;
    }
    const sub = i.options.getSubcommand(false) ?? 'help';
    const file = sub === 'diagnose' ? i.options.getAttachment('file') : null;
    const quick = QUICK.has(sub) || (sub === 'diagnose' && !file);
    if (!quick) await i.deferReply();
    const answer = async (): Promise<{ reply: Reply; ok: boolean }> => {
      let line = interactionLine(sub, (n) => i.options.getString(n));
      const read = file ? await readFiles([{ name: file.name, url: file.url, size: file.size }]) : { bodies: [], notes: [] };
      if (read.bodies.length) line += '\n' + read.bodies[0];
      const isAdmin = isDiscordAdmin(o.config, i.user.id, rolesOf(i.member));
      const result = await runCommand(o, { platform: 'discord', userId: i.user.id, channelId: i.channelId, isAdmin, line });
      const reply = read.notes.length ? { ...result.reply, sections: [{ text: read.notes.join('\n') }, ...result.reply.sections] } : result.reply;
      return { reply, ok: result.outcome === 'ok' };
    };
    // An attachment's download and diagnosis hold a process-wide slot (bounded memory under bursts).
    const { reply, ok } = file ? await downloadSlots.run(answer) : await answer();
    const body = payload(reply);
    if (quick) await i.reply({ ...body, ...(ok ? {} : { flags: MessageFlags.Ephemeral as const }) });
    else await i.editReply(body);
  }

  async function onMessage(m: Message) {
    if (m.author.bot || m.author.id === client.user?.id || m.webhookId) return;
    if (!allowed(m.guildId, m.channelId)) {
      // Someone wrote to the bot directly: say why there is no answer. Other channels stay silent.
      if (!m.guildId) await pacer.run(m.channelId, () => m.reply({ content: DM_REFUSAL, allowedMentions: NO_MENTIONS }));
      return;
    }
    const text = m.content ?? '';
    const pasted = text.trim() !== '' && looksLikeLog(text) && !/^\s*\/gpu\s/i.test(text);
    const files = [...m.attachments.values()].filter((a) => TEXT_FILE.test(a.name) || (a.contentType ?? '').startsWith('text/plain'));
    if (!pasted && files.length === 0) return;
    const answer = async (): Promise<Reply | null> => {
      const { bodies, notes } = await readFiles(files.map((a) => ({ name: a.name, url: a.url, size: a.size })));
      if (pasted) bodies.unshift(text);
      if (bodies.length === 0) return { title: 'Nothing I could read', severity: 'warning', sections: [{ text: notes.join('\n') }] };
      const joined = bodies.join('\n');
      bodies.length = 0; // `joined` holds the text now; a 16 MB body is not kept twice
      // An attached message.txt that is chatter (not a log) gets no reply either.
      if (!looksLikeLog(joined) && !files.some((a) => TEXT_FILE.test(a.name) && a.name !== 'message.txt')) return null;
      const isAdmin = isDiscordAdmin(o.config, m.author.id, rolesOf(m.member));
      const result = await runCommand(o, { platform: 'discord', userId: m.author.id, channelId: m.channelId, isAdmin, line: `/gpu diagnose ${joined}` });
      return notes.length ? { ...result.reply, sections: [{ text: notes.join('\n') }, ...result.reply.sections] } : result.reply;
    };
    // Downloads and their diagnosis hold a process-wide slot, so a burst of files cannot fill memory.
    const reply = files.length ? await downloadSlots.run(answer) : await answer();
    if (reply) await pacer.run(m.channelId, () => m.reply(payload(reply)));
  }

  client.on(Events.InteractionCreate, (i) => {
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
      const ready = new Promise<void>((r) => client.once(Events.ClientReady, () => r()));
      await client.login(o.env.token);
      await ready;
      o.health?.set('discord', 'connected');
      log.info({ user: client.user?.id }, 'discord adapter started');
    },
    async postToChannel(channelId, reply) {
      const channel = await client.channels.fetch(channelId);
      if (!channel || !channel.isSendable()) throw new Error(`cannot post to Discord channel ${channelId}`);
      await channel.send(payload(reply));
    },
    async stop() {
      await inflight.drain();
      await client.destroy();
      o.health?.set('discord', 'stopped');
    },
  };
}
