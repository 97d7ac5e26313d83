// The Discord adapter (discord.js v14): the /gpu application command and pasted logs / message.txt
// attachments in channels (Message Content intent) and DMs. DISCORD_API_URL points REST (and so the
// gateway URL from GET /gateway/bot) elsewhere: that is how the tests run the real client against fakes.
import { AttachmentBuilder, Client, Events, GatewayIntentBits, Partials, type ChatInputCommandInteraction, type Message } from 'discord.js';
import { looksLikeLog } from '../../core/paste.js';
import type { Reply } from '../../core/reply.js';
import {
  type AdapterDeps,
  ChannelPacer,
  MAX_FILE_BYTES,
  TEXT_FILE,
  channelAllowed,
  downloadCapped,
  fmtBytes,
  isDiscordAdmin,
  looksBinary,
  runCommand,
  Inflight,
} from '../common.js';
import { renderDiscord } from './render.js';
import { interactionLine } from './commands.js';
import type { Health } from '../../ops/health.js';

export interface DiscordEnv {
  token: string;
  applicationId?: string;
  apiUrl?: string;
}

export function discordEnvFrom(env: NodeJS.ProcessEnv): DiscordEnv | null {
  if (!env.DISCORD_TOKEN) return null;
  return { token: env.DISCORD_TOKEN, applicationId: env.DISCORD_APPLICATION_ID || undefined, apiUrl: env.DISCORD_API_URL || undefined };
}

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

function payload(reply: Reply) {
  const m = renderDiscord(reply);
  return {
    embeds: m.embeds,
    files: m.files.map((f) => new AttachmentBuilder(f.data, { name: f.filename })),
    allowedMentions: { parse: [] as never[], repliedUser: false },
  };
}

export function createDiscordAdapter(o: DiscordAdapterOptions): DiscordAdapter {
  const log = o.logger.child({ adapter: 'discord' });
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages],
    partials: [Partials.Channel],
    rest: o.env.apiUrl ? { api: o.env.apiUrl.replace(/\/$/, '') } : {},
  });
  const pacer = o.pacer ?? new ChannelPacer(1000);
  const inflight = new Inflight();
  const track = inflight.track;
  const cap = o.maxFileBytes ?? MAX_FILE_BYTES;
  const allowed = (guildId: string | null, channelId: string) => !guildId || channelAllowed(o.config.channels.discord, channelId, guildId);
  const rolesOf = (member: unknown): string[] => {
    const m = member as { roles?: string[] | { cache?: Map<string, unknown> }; _roles?: string[] } | null;
    if (!m?.roles) return [];
    if (Array.isArray(m.roles)) return m.roles; // raw API member (guild not cached)
    if (Array.isArray(m._roles)) return m._roles; // GuildMember: role IDs as sent, cached or not
    return m.roles.cache ? [...m.roles.cache.keys()] : [];
  };

  async function readAttachment(a: { name: string; url: string; size: number }, notes: string[]): Promise<string | null> {
    try {
      const got = await downloadCapped(a.url, {}, cap, a.size);
      if (looksBinary(got.data)) {
        notes.push(`${a.name} is not a text file (binary content), so I did not read it. Attach the log as .log or .txt text.`);
        return null;
      }
      notes.push(got.truncated ? `${a.name} is ${fmtBytes(got.totalBytes)}, over the ${fmtBytes(cap)} I read; I diagnosed its first ${fmtBytes(got.data.length)}.` : `Read ${a.name} (${fmtBytes(got.data.length)}).`);
      return got.data.toString('utf8');
    } catch (e) {
      notes.push(`I could not download ${a.name}: ${(e as Error).message}.`);
      return null;
    }
  }

  async function onCommand(i: ChatInputCommandInteraction) {
    if (!allowed(i.guildId, i.channelId)) {
      await i.reply({ content: "I don't answer commands in this channel. Ask an admin to add it to the bot's `channels.discord` list.", ephemeral: true });
      return;
    }
    const sub = i.options.getSubcommand(false) ?? 'help';
    const file = sub === 'diagnose' ? i.options.getAttachment('file') : null;
    const quick = QUICK.has(sub) || (sub === 'diagnose' && !file);
    if (!quick) await i.deferReply();
    let line = interactionLine(sub, (n) => i.options.getString(n));
    const notes: string[] = [];
    if (file) {
      const text = await readAttachment({ name: file.name, url: file.url, size: file.size }, notes);
      if (text != null) line += '\n' + text;
    }
    const isAdmin = isDiscordAdmin(o.config, i.user.id, rolesOf(i.member));
    const result = await runCommand(o, { platform: 'discord', userId: i.user.id, channelId: i.channelId, isAdmin, line });
    let reply = result.reply;
    if (notes.length) reply = { ...reply, sections: [{ text: notes.join('\n') }, ...reply.sections] };
    const body = payload(reply);
    if (quick) await i.reply({ ...body, ephemeral: result.outcome !== 'ok' });
    else await i.editReply(body);
  }

  async function onMessage(m: Message) {
    if (m.author.bot || m.author.id === client.user?.id || m.webhookId) return;
    if (!allowed(m.guildId, m.channelId)) return;
    const text = m.content ?? '';
    const bodies: string[] = [];
    const notes: string[] = [];
    if (text.trim() && looksLikeLog(text) && !/^\s*\/gpu\s/i.test(text)) bodies.push(text);
    for (const a of m.attachments.values()) {
      if (!TEXT_FILE.test(a.name) && !(a.contentType ?? '').startsWith('text/plain')) continue;
      const body = await readAttachment({ name: a.name, url: a.url, size: a.size }, notes);
      if (body != null) bodies.push(body);
    }
    if (bodies.length === 0 && notes.length === 0) return;
    const joined = bodies.join('\n');
    // An attached message.txt that is chatter (not a log) gets no reply either.
    if (bodies.length && !looksLikeLog(joined) && !m.attachments.some((a) => TEXT_FILE.test(a.name) && a.name !== 'message.txt')) return;
    let reply: Reply;
    if (bodies.length) {
      const isAdmin = isDiscordAdmin(o.config, m.author.id, rolesOf(m.member));
      const result = await runCommand(o, { platform: 'discord', userId: m.author.id, channelId: m.channelId, isAdmin, line: `/gpu diagnose ${joined}` });
      reply = notes.length ? { ...result.reply, sections: [{ text: notes.join('\n') }, ...result.reply.sections] } : result.reply;
    } else {
      reply = { title: 'Nothing I could read', severity: 'warning', sections: [{ text: notes.join('\n') }] };
    }
    await pacer.run(m.channelId, () => m.reply(payload(reply)));
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
