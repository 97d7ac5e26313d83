// The /gpu application command as Discord registers it, generated from the command definitions in
// commands/ (their usage line and zod options, read by ./usage.ts), and the mapping from an
// interaction's options to the invocation the registry runs (typed, as the console's and Slack's lines
// become once tokenised). A command with
// several forms (`hosts list|add ...|remove ...`) becomes a subcommand group, any other a subcommand.
import {
  ApplicationCommandOptionType as T,
  ApplicationCommandType,
  ApplicationIntegrationType,
  InteractionContextType,
  type APIApplicationCommandBasicOption,
  type APIApplicationCommandOption,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { usageForms, type UsageArg, type UsageForm } from './usage.js';
import type { AnyCommand } from '../../core/registry.js';
import type { CommandInvocation } from '../../core/invocation.js';
import { catalogue, t, type MessageKey } from '../../core/i18n.js';

export type GpuCommandJson = RESTPostAPIChatInputApplicationCommandsJSONBody;

/** What an autocompleted option offers: registered host names, or the GPU indexes of the chosen host. */
export type Completion = 'host' | 'gpu';

export interface DiscordArg extends UsageArg {
  completion?: Completion;
}

/** One invocable Discord subcommand: how its options become an invocation of a command. */
export interface DiscordRoute {
  command: string;
  group: string | null;
  sub: string;
  /** Literal words after the command name (`add` in `/gpu hosts add`). */
  words: string[];
  args: DiscordArg[];
  /** The attachment option that stands in for a free-text argument (a log file for diagnose). */
  file?: string;
}

export interface DiscordCommandSet {
  json: GpuCommandJson;
  routes: DiscordRoute[];
  route(group: string | null, sub: string | null): DiscordRoute | undefined;
}

const DESCRIPTION_MAX = 100;
const CHOICES_MAX = 25;
/** Discord's cap on a string option's length. */
const STRING_MAX = 6000;
/** Forms that create a host: their NAME is new, so existing names are not offered. */
const CREATING = new Set(['add']);

const cut = (s: string, max = DESCRIPTION_MAX) => (s.length <= max ? s : s.slice(0, max - 1) + '…');

/** Readable descriptions for the placeholders the commands use; any other shows its placeholder. */
const DESCRIPTIONS: Record<string, MessageKey> = {
  host: 'slash.arg.host',
  name: 'slash.arg.host',
  target: 'slash.arg.target',
  key: 'slash.arg.key',
  trust: 'slash.arg.trust',
  fingerprint: 'slash.arg.fingerprint',
  gpu: 'slash.arg.gpu',
  text: 'slash.arg.text',
  'host-name': 'slash.arg.hostName',
  size: 'slash.arg.size',
  count: 'slash.arg.count',
  hours: 'slash.arg.hours',
  duration: 'slash.arg.duration',
  shared: 'slash.arg.shared',
  theme: 'slash.arg.theme',
  id: 'slash.arg.id',
  unixuser: 'slash.arg.unixuser',
  'display-name': 'slash.arg.displayName',
};

/** The language Discord shows Simplified Chinese users (Discord's own locale name). */
const ZH = 'zh-CN';

/** The zh text of an English catalogue message (a schema's .describe() is made in English), else the text itself. */
function inZh(english: string): string {
  const en = catalogue('en');
  const key = Object.keys(en).find((k) => en[k] === english) as MessageKey | undefined;
  return key ? t('zh', key) : english;
}

/** An option's description, and its zh-CN localization. */
function describe(a: UsageArg): { description: string; description_localizations: Record<string, string> } {
  const of = (loc: 'en' | 'zh') => {
    const known = DESCRIPTIONS[a.name];
    const base = a.value.description
      ? loc === 'en'
        ? a.value.description
        : inZh(a.value.description)
      : known
        ? t(loc, known)
        : a.placeholder.replace(/^--/, '');
    return cut(a.variadic ? t(loc, a.required ? 'slash.arg.variadic' : 'slash.arg.variadicAll', { base }) : base);
  };
  return { description: of('en'), description_localizations: { [ZH]: of('zh') } };
}

/** A description and its zh-CN localization. */
const described = (en: string, zh: string) => ({ description: cut(en), description_localizations: { [ZH]: cut(zh) } });

function completionOf(form: UsageForm, a: UsageArg): Completion | undefined {
  if (a.kind !== 'positional' && a.kind !== 'flag') return undefined;
  if (a.value.choices || a.value.type === 'boolean' || a.value.type === 'number') return undefined;
  if (a.name === 'gpu') return 'gpu';
  if ((a.name === 'host' || a.name === 'name') && !form.words.some((w) => CREATING.has(w))) return 'host';
  return undefined;
}

function optionJson(a: DiscordArg): APIApplicationCommandBasicOption {
  const common = { name: a.name, ...describe(a), required: a.required };
  const v = a.value;
  const choices = v.choices && v.choices.length <= CHOICES_MAX ? v.choices : undefined;
  const auto = a.completion ? { autocomplete: true as const } : {};
  switch (v.type) {
    case 'boolean':
      return { ...common, type: T.Boolean };
    case 'integer':
    case 'number': {
      const type = v.type === 'integer' ? T.Integer : T.Number;
      const range = { ...(v.min !== undefined ? { min_value: v.min } : {}), ...(v.max !== undefined ? { max_value: v.max } : {}) };
      if (choices) return { ...common, type, choices: choices.map((c) => ({ name: String(c), value: Number(c) })) } as APIApplicationCommandBasicOption;
      return { ...common, type, ...range, ...auto };
    }
    default: {
      if (choices) return { ...common, type: T.String, choices: choices.map((c) => ({ name: String(c), value: String(c) })) };
      const lengths = {
        ...(v.minLength !== undefined && v.minLength <= STRING_MAX ? { min_length: v.minLength } : {}),
        ...(v.maxLength !== undefined && v.maxLength <= STRING_MAX ? { max_length: v.maxLength } : {}),
      };
      return { ...common, type: T.String, ...lengths, ...auto };
    }
  }
}

function routeOf(command: AnyCommand, form: UsageForm, split: boolean): DiscordRoute {
  // Kept in the usage's order: that is the order positional words take in `_`.
  const args = form.args.map((a) => ({ ...a, ...(completionOf(form, a) ? { completion: completionOf(form, a) } : {}) }));
  const hasText = args.some((a) => a.kind === 'text');
  return {
    command: command.name,
    group: split ? command.name : null,
    sub: split ? form.words[0] : command.name,
    words: form.words,
    args,
    ...(hasText ? { file: 'file' } : {}),
  };
}

function subcommandJson(
  route: DiscordRoute,
  description: { description: string; description_localizations: Record<string, string> },
): APIApplicationCommandOption {
  // Discord wants required options before optional ones; the invocation is built by name, so order is free here.
  const options: APIApplicationCommandBasicOption[] = [...route.args].sort((x, y) => Number(y.required) - Number(x.required)).map(optionJson);
  if (route.file) options.push({ type: T.Attachment, name: route.file, ...described(t('en', 'slash.arg.file'), t('zh', 'slash.arg.file')), required: false });
  return { type: T.Subcommand, name: route.sub, ...description, ...(options.length ? { options } : {}) };
}

/** The /gpu command for these definitions, and how each of its subcommands maps to an invocation. */
export function buildDiscordCommands(commands: AnyCommand[]): DiscordCommandSet {
  const routes: DiscordRoute[] = [];
  const options: APIApplicationCommandOption[] = [];
  for (const command of commands) {
    const forms = usageForms(command);
    const split = forms.length > 1 || forms[0].words.length > 0;
    if (!split) {
      const r = routeOf(command, forms[0], false);
      routes.push(r);
      options.push(subcommandJson(r, summaryOf(command)));
      continue;
    }
    const subs = forms.map((form) => {
      const r = routeOf(command, form, true);
      routes.push(r);
      const admin = safeRequiresAdmin(command, form.words);
      const line = (loc: 'en' | 'zh') => {
        const suffix = admin ? t(loc, 'slash.adminsOnly') : '';
        return `/gpu ${form.text}`.slice(0, DESCRIPTION_MAX - suffix.length) + suffix;
      };
      return subcommandJson(r, described(line('en'), line('zh')));
    });
    options.push({ type: T.SubcommandGroup, name: command.name, ...summaryOf(command), options: subs as never });
  }
  const json: GpuCommandJson = {
    type: ApplicationCommandType.ChatInput,
    name: 'gpu',
    ...described(t('en', 'slash.gpu'), t('zh', 'slash.gpu')),
    // Where /gpu may be used (replaces the deprecated dm_permission): servers and DMs with the bot.
    contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
    integration_types: [ApplicationIntegrationType.GuildInstall],
    options,
  };
  const byKey = new Map(routes.map((r) => [`${r.group ?? ''}/${r.sub}`, r]));
  return { json, routes, route: (group, sub) => byKey.get(`${group ?? ''}/${sub ?? ''}`) };
}

/** A command's summary (help's line) and its zh-CN localization. */
function summaryOf(command: AnyCommand) {
  const key = `cmd.${command.name}.summary`;
  return described(command.summary, key in catalogue('zh') ? t('zh', key as MessageKey) : command.summary);
}

function safeRequiresAdmin(command: AnyCommand, words: string[]): boolean {
  try {
    return Boolean(command.requiresAdmin?.({ _: words, text: words.join(' ') }));
  } catch {
    return false;
  }
}

export type OptionValue = string | number | boolean | null | undefined;

/**
 * The invocation an interaction stands for, handed to the registry as Discord typed it (no line is
 * written and tokenised again): literal words and positional values in the usage's order as `_`, flags
 * by their key with the type Discord gave (an integer stays a number), free text as `text`. A variadic
 * option's words are split at blanks, as they are typed. A later positional given without an earlier
 * one would take the earlier one's place, so that is a problem to tell the user.
 */
export function interactionInvocation(route: DiscordRoute, get: (name: string) => OptionValue): { invocation: CommandInvocation } | { problem: string } {
  const positional: string[] = [];
  const flags: Record<string, string | number | boolean> = {};
  let text = '';
  let missing: string | null = null;
  for (const a of route.args) {
    const v = get(a.name);
    // A false switch is one not given, as in the text grammar (a bare --flag is true).
    const present = v !== null && v !== undefined && v !== '' && v !== false;
    if (a.kind === 'text') {
      if (present) text = String(v);
    } else if (a.kind === 'flag') {
      if (present) flags[a.key ?? a.name] = v;
    } else if (!present) {
      missing ??= a.name;
    } else if (missing) {
      return {
        problem: `Set \`${missing}\` as well when you set \`${a.name}\`: /gpu ${route.command} takes them in the order ${route.args
          .filter((x) => x.kind === 'positional')
          .map((x) => x.name)
          .join(', ')}.`,
      };
    } else {
      // Positional words are words, as the tokenizer gives them; the command's schema types them.
      const s = String(v);
      positional.push(...(a.variadic ? s.split(/\s+/).filter(Boolean) : [s]));
    }
  }
  return { invocation: { command: route.command, options: { ...flags, _: [...route.words, ...positional] }, text } };
}

type TreeOption = {
  type: T;
  name: string;
  description?: string;
  required?: boolean;
  autocomplete?: boolean;
  choices?: { name: string }[];
  min_value?: number;
  max_value?: number;
  options?: TreeOption[];
};

const TYPE_NAMES: Record<number, string> = {
  [T.String]: 'string',
  [T.Integer]: 'integer',
  [T.Number]: 'number',
  [T.Boolean]: 'boolean',
  [T.Attachment]: 'attachment',
  [T.User]: 'user',
  [T.Channel]: 'channel',
  [T.Role]: 'role',
  [T.Mentionable]: 'mentionable',
};

/**
 * The commands as a readable tree (command, subcommand groups, subcommands, options with their type and
 * whether they are required, complete or choose), then the count of each. Reads the JSON Discord
 * returns as well as what is sent.
 */
export function commandTree(commands: { name: string; description?: string; options?: TreeOption[] }[]): string {
  const counts = { commands: 0, groups: 0, subcommands: 0, options: 0 };
  const lines: string[] = [];
  const walk = (opts: TreeOption[], indent: string) => {
    opts.forEach((o, n) => {
      const last = n === opts.length - 1;
      const branch = indent + (last ? '└─ ' : '├─ ');
      const next = indent + (last ? '   ' : '│  ');
      if (o.type === T.SubcommandGroup) {
        counts.groups++;
        lines.push(`${branch}${o.name} (group) — ${o.description ?? ''}`);
        walk(o.options ?? [], next);
      } else if (o.type === T.Subcommand) {
        counts.subcommands++;
        lines.push(`${branch}${o.name} — ${o.description ?? ''}`);
        walk(o.options ?? [], next);
      } else {
        counts.options++;
        const traits = [TYPE_NAMES[o.type] ?? `type ${o.type}`, o.required ? 'required' : 'optional'];
        if (o.autocomplete) traits.push('autocomplete');
        if (o.choices) traits.push(`choices: ${o.choices.map((c) => c.name).join('|')}`);
        if (o.min_value !== undefined || o.max_value !== undefined) traits.push(`${o.min_value ?? ''}..${o.max_value ?? ''}`);
        lines.push(`${branch}${o.name} (${traits.join(', ')}) — ${o.description ?? ''}`);
      }
    });
  };
  for (const c of commands) {
    counts.commands++;
    lines.push(`/${c.name} — ${c.description ?? ''}`);
    walk(c.options ?? [], '');
  }
  const n = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
  lines.push(
    `${n(counts.commands, 'command', 'commands')}, ${n(counts.groups, 'subcommand group', 'subcommand groups')}, ${n(counts.subcommands, 'subcommand', 'subcommands')}, ${n(counts.options, 'option', 'options')}`,
  );
  return lines.join('\n');
}
