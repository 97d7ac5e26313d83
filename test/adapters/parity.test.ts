// Slack and Discord offer the same commands and options. The Slack side is what `/gpu <text>` accepts:
// each command's usage line and its zod options (read here on their own, through zod's JSON Schema, not
// through the Discord generator's reader). The Discord side is the generated /gpu command JSON. Every
// form, flag and positional argument of one must be on the other, with the same type, bounds and
// choices, and every Discord subcommand filled in must give a line the text grammar accepts.
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApplicationCommandOptionType as T } from 'discord.js';
import { allCommands } from '../../commands/index.js';
import { defineCommand } from '../../src/core/command.js';
import { buildDiscordCommands, interactionInvocation, type DiscordCommandSet, type GpuCommandJson } from '../../src/adapters/discord/commands.js';
import type { CommandInvocation } from '../../src/core/invocation.js';
import { CommandRegistry } from '../../src/core/registry.js';
import { testDeps } from './helpers.js';
import type { AnyCommand } from '../../src/core/registry.js';

type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  anyOf?: JsonSchema[];
};
type Opt = { type: number; name: string; required?: boolean; choices?: { value: unknown }[]; min_value?: number; max_value?: number; options?: Opt[] };

/** One form of a command as the text grammar takes it (`hosts add NAME user@host[:port] [--key PATH] ...`). */
interface SlackForm {
  command: string;
  /** The literal word that picks the form (`add`), or null for a command with one form. */
  word: string | null;
  /** Positional arguments in order, and whether each is required (not in [brackets]). */
  positionals: { placeholder: string; required: boolean; schema: JsonSchema | undefined }[];
  /** Flags; `bare` is a switch written without a value (`[--json]`). */
  flags: { key: string; required: boolean; bare: boolean; schema: JsonSchema | undefined }[];
  freeText: boolean;
}

/** Splits at blanks and `|` outside [...] / <...>. */
function usageTokens(usage: string): string[] {
  const out: string[] = [];
  let cur = '';
  let depth = 0;
  for (const ch of usage) {
    if (ch === '[' || ch === '<') depth++;
    if (ch === ']' || ch === '>') depth--;
    if (depth === 0 && (ch === ' ' || ch === '|')) {
      if (cur) out.push(cur);
      if (ch === '|') out.push('|');
      cur = '';
    } else cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}

function schemaOf(c: AnyCommand): JsonSchema {
  return z.toJSONSchema(c.options, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

function slackForms(c: AnyCommand): SlackForm[] {
  const schema = schemaOf(c);
  const props = schema.properties ?? {};
  const positional = (i: number) => props._?.prefixItems?.[i] ?? props._?.items;
  const [name, ...rest] = usageTokens(c.usage);
  expect(name).toBe(c.name);
  const alternatives: string[][] = [[]];
  for (const t of rest) {
    if (t === '|') alternatives.push([]);
    else alternatives[alternatives.length - 1].push(t);
  }
  const split = alternatives.length > 1;
  const forms = alternatives.map((alt): SlackForm => {
    const word = split ? alt[0] : null;
    const form: SlackForm = { command: c.name, word, positionals: [], flags: [], freeText: false };
    for (const t of split ? alt.slice(1) : alt) {
      const optional = t.startsWith('[');
      const inner = optional ? t.slice(1, -1) : t;
      const flag = /^--([a-z][a-z0-9-]*)/.exec(inner);
      if (flag) form.flags.push({ key: flag[1], required: !optional, bare: !/[ =]/.test(inner), schema: props[flag[1]] });
      else if (inner.startsWith('<')) form.freeText = true;
      else form.positionals.push({ placeholder: inner, required: !optional, schema: positional(form.positionals.length + (split ? 1 : 0)) });
    }
    return form;
  });
  // A key the schema takes that the usage does not show is still accepted in text, on every form.
  for (const key of Object.keys(props)) {
    if (key === '_' || key === 'text' || forms.some((f) => f.flags.some((x) => x.key === key))) continue;
    for (const f of forms) f.flags.push({ key, required: false, bare: false, schema: props[key] });
  }
  return forms;
}

/** The Discord option type a JSON Schema value must have, with its bounds and choices. */
function expectedShape(s: JsonSchema | undefined): { type: number; min?: number; max?: number; choices?: unknown[] } {
  // A union of words only is a choice; of a word and a number (a GPU index or `all`), free text that the registry checks.
  const branches = (s?.anyOf ?? []).filter((x) => x.type !== 'null');
  if (branches.length > 1) return branches.every((b) => b.const !== undefined) ? { type: T.String, choices: branches.map((b) => b.const) } : { type: T.String };
  const v = s?.anyOf?.find((x) => x.type !== 'null') ?? s ?? {};
  const choices = v.enum ?? (v.const !== undefined ? [v.const] : undefined);
  const type = v.type === 'integer' ? T.Integer : v.type === 'number' ? T.Number : v.type === 'boolean' ? T.Boolean : T.String;
  return {
    type,
    ...(v.minimum !== undefined ? { min: v.minimum } : {}),
    ...(v.maximum !== undefined ? { max: v.maximum } : {}),
    ...(choices ? { choices } : {}),
  };
}

function shapeOf(o: Opt) {
  return {
    type: o.type,
    ...(o.min_value !== undefined ? { min: o.min_value } : {}),
    ...(o.max_value !== undefined ? { max: o.max_value } : {}),
    ...(o.choices ? { choices: o.choices.map((c) => c.value) } : {}),
  };
}

/** Everything on one platform and not the other; empty when they match. */
function parityProblems(commands: AnyCommand[], json: GpuCommandJson): string[] {
  const problems: string[] = [];
  const discord = new Map<string, Opt>();
  for (const top of (json.options ?? []) as Opt[]) {
    if (top.type === T.SubcommandGroup) for (const sub of top.options ?? []) discord.set(`${top.name} ${sub.name}`, sub);
    else discord.set(top.name, top);
  }
  const seen = new Set<string>();
  for (const c of commands) {
    const forms = slackForms(c);
    const keys = new Set(Object.keys(schemaOf(c).properties ?? {}).filter((k) => k !== '_' && k !== 'text'));
    const flagsOnDiscord = new Set<string>();
    for (const f of forms) {
      const path = f.word ? `${c.name} ${f.word}` : c.name;
      seen.add(path);
      const sub = discord.get(path);
      if (!sub) {
        problems.push(`/gpu ${path}: on Slack, not on Discord`);
        continue;
      }
      const opts = sub.options ?? [];
      const byName = new Map(opts.map((o) => [o.name, o]));
      for (const flag of f.flags) {
        const o = byName.get(flag.key);
        if (!o) {
          problems.push(`/gpu ${path} --${flag.key}: on Slack, not on Discord`);
          continue;
        }
        flagsOnDiscord.add(flag.key);
        if (Boolean(o.required) !== flag.required) problems.push(`/gpu ${path} --${flag.key}: required on one platform only`);
        // A bare [--switch] in the usage is a boolean; a flag with a value has its key's type.
        const want = flag.bare ? { type: T.Boolean } : expectedShape(flag.schema);
        if (JSON.stringify(shapeOf(o)) !== JSON.stringify(want))
          problems.push(`/gpu ${path} --${flag.key}: ${JSON.stringify(shapeOf(o))} on Discord, ${JSON.stringify(want)} on Slack`);
      }
      // Options that are not flags stand for the positional words, in order, then the free text.
      const rest = opts.filter((o) => !keys.has(o.name) && o.type !== T.Attachment && !(f.freeText && o.name === 'text'));
      if (rest.length !== f.positionals.length)
        problems.push(
          `/gpu ${path}: ${f.positionals.length} positional arguments on Slack (${f.positionals.map((p) => p.placeholder).join(' ')}), ${rest.length} on Discord (${rest.map((o) => o.name).join(' ')})`,
        );
      const requiredOnDiscord = rest.filter((o) => o.required).length;
      const requiredOnSlack = f.positionals.filter((p) => p.required).length;
      if (requiredOnDiscord !== requiredOnSlack)
        problems.push(`/gpu ${path}: ${requiredOnSlack} required positional arguments on Slack, ${requiredOnDiscord} on Discord`);
      const restInOrder = [...rest.filter((o) => o.required), ...rest.filter((o) => !o.required)];
      f.positionals.forEach((p, i) => {
        const o = restInOrder[i];
        if (o && JSON.stringify(shapeOf(o)) !== JSON.stringify(expectedShape(p.schema)))
          problems.push(`/gpu ${path} ${p.placeholder}: ${JSON.stringify(shapeOf(o))} on Discord, ${JSON.stringify(expectedShape(p.schema))} on Slack`);
      });
      if (f.freeText && !byName.has('text')) problems.push(`/gpu ${path} <text>: on Slack, not on Discord`);
      // The one Discord-only option: an attachment where Slack reads a shared file instead of pasted text.
      for (const o of opts) if (o.type === T.Attachment && !f.freeText) problems.push(`/gpu ${path} ${o.name}: an attachment where Slack takes no file`);
      if (f.freeText && !opts.some((o) => o.type === T.Attachment))
        problems.push(`/gpu ${path}: Slack reads a shared log file, Discord has no attachment option`);
    }
    for (const key of keys) if (!flagsOnDiscord.has(key)) problems.push(`/gpu ${c.name} --${key}: accepted on Slack, on no Discord subcommand`);
  }
  for (const path of discord.keys()) if (!seen.has(path)) problems.push(`/gpu ${path}: on Discord, not on Slack`);
  return problems;
}

/** A value each option accepts, by what it is: a host, a target, a fingerprint, a number in range. */
const SAMPLES: Record<string, string> = {
  host: 'gpu1',
  name: 'gpu1',
  target: 'ml@10.0.0.5:22',
  key: './keys/bot',
  trust: 'SHA256:' + 'A'.repeat(42) + 'Q',
  fingerprint: 'SHA256:' + 'A'.repeat(42) + 'Q',
  gpu: '0',
  hours: '6',
  duration: '2h',
  size: '40G',
  count: '2',
  id: '1',
  text: 'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB',
};
function sample(o: Opt): string | number | boolean {
  if (o.choices?.length) return o.choices[0].value as string | number;
  if (o.type === T.Boolean) return true;
  if (o.type === T.Integer || o.type === T.Number) return o.min_value ?? Math.min(1, o.max_value ?? 1);
  return SAMPLES[o.name] ?? 'x';
}

let set: DiscordCommandSet;
let deps: Awaited<ReturnType<typeof testDeps>>;
const commands = allCommands();

beforeAll(async () => {
  set = buildDiscordCommands(commands);
  deps = await testDeps({ watch: true });
});

const clone = (j: GpuCommandJson): GpuCommandJson => JSON.parse(JSON.stringify(j));

/** The line a Slack user would type for an invocation: words, then `--key=value` (quoted where it holds a blank), then the text. */
function typedLine(inv: CommandInvocation): string {
  const q = (v: unknown) => (/\s/.test(String(v)) ? `"${String(v)}"` : String(v));
  const { _: words = [], ...flags } = inv.options;
  const parts = ['/gpu', inv.command, ...words.map(q)];
  for (const [k, v] of Object.entries(flags)) parts.push(v === true ? `--${k}` : `--${k}=${q(v)}`);
  return inv.text ? `${parts.join(' ')} ${inv.text}` : parts.join(' ');
}

describe('Slack and Discord parity', () => {
  it('every command, form and option of the text grammar is on Discord, and nothing more', () => {
    expect(parityProblems(commands, set.json)).toEqual([]);
    // The commands the help lists are all there (digest and watch among them), hosts as a group.
    const top = (set.json.options ?? []) as Opt[];
    expect(top.map((o) => o.name).sort()).toEqual(commands.map((c) => c.name).sort());
    expect(top.find((o) => o.name === 'hosts')).toMatchObject({ type: T.SubcommandGroup });
    expect(
      top
        .find((o) => o.name === 'hosts')!
        .options!.map((o) => o.name)
        .sort(),
    ).toEqual(['add', 'list', 'remove', 'test', 'trust']);
  });

  it('every Discord subcommand, with all its options or only the required ones, is an invocation the registry accepts, as it does the same typed as text', async () => {
    let checked = 0;
    for (const top of (set.json.options ?? []) as Opt[]) {
      const subs = top.type === T.SubcommandGroup ? (top.options ?? []).map((s) => ({ group: top.name, sub: s })) : [{ group: null, sub: top }];
      for (const { group, sub } of subs) {
        const route = set.route(group, sub.name);
        expect(route, `${group ?? ''} ${sub.name}`).toBeDefined();
        for (const which of ['all', 'required'] as const) {
          const chosen = (sub.options ?? []).filter((o) => o.type !== T.Attachment && (which === 'all' || o.required));
          const values = new Map(chosen.map((o) => [o.name, sample(o)]));
          const built = interactionInvocation(route!, (n) => values.get(n));
          expect(built, `${sub.name} ${which}`).toHaveProperty('invocation');
          const invocation = (built as { invocation: CommandInvocation }).invocation;
          const line = typedLine(invocation);
          // What the Discord adapter hands the registry (typed options), and what Slack does with `/gpu <text>`.
          const result = await deps.registry.dispatch(invocation, { platform: 'discord', userId: 'U1', isAdmin: true, services: deps.services });
          expect(['usage', 'unknown'], `${line}: ${JSON.stringify(result.reply.sections)}`).not.toContain(result.outcome);
          expect(result.command).toBe(route!.command);
          const typed = await deps.registry.dispatch(line, { platform: 'slack', userId: 'U1', isAdmin: true, services: deps.services });
          expect(typed.outcome, line).toBe(result.outcome);
          expect(typed.command, line).toBe(result.command);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(2 * commands.length);
  });

  it('fails when any one option or subcommand is removed from the Discord side', () => {
    const base = set.json;
    let removals = 0;
    const tops = (base.options ?? []) as Opt[];
    tops.forEach((top, ti) => {
      const drop = (mutate: (j: { options: Opt[] }) => void, what: string) => {
        const j = clone(base) as unknown as { options: Opt[] };
        mutate(j);
        expect(parityProblems(commands, j as unknown as GpuCommandJson), `without ${what}`).not.toEqual([]);
        removals++;
      };
      drop((j) => j.options.splice(ti, 1), `/gpu ${top.name}`);
      const subs = top.type === T.SubcommandGroup ? (top.options ?? []) : [top];
      subs.forEach((sub, si) => {
        const subAt = (j: { options: Opt[] }) => (top.type === T.SubcommandGroup ? j.options[ti].options![si] : j.options[ti]);
        if (top.type === T.SubcommandGroup) drop((j) => j.options[ti].options!.splice(si, 1), `/gpu ${top.name} ${sub.name}`);
        (sub.options ?? []).forEach((o, oi) => drop((j) => subAt(j).options!.splice(oi, 1), `${sub.name} ${o.name}`));
      });
    });
    expect(removals).toBeGreaterThan(commands.length);
  });

  it('fails when Discord has an option or subcommand Slack does not take, or a type Slack would refuse', () => {
    const status = (j: { options: Opt[] }) => j.options.find((o) => o.name === 'status')!;
    const extraOption = clone(set.json) as unknown as { options: Opt[] };
    status(extraOption).options!.push({ type: T.Boolean, name: 'verbose', required: false });
    expect(parityProblems(commands, extraOption as unknown as GpuCommandJson).join('\n')).toMatch(/status: 1 positional arguments on Slack/);
    const extraSub = clone(set.json) as unknown as { options: Opt[] };
    extraSub.options.push({ type: T.Subcommand, name: 'reboot' });
    expect(parityProblems(commands, extraSub as unknown as GpuCommandJson)).toContain('/gpu reboot: on Discord, not on Slack');
    const retyped = clone(set.json) as unknown as { options: Opt[] };
    status(retyped).options![0].type = T.Integer;
    expect(parityProblems(commands, retyped as unknown as GpuCommandJson).join('\n')).toMatch(/status HOST\.\.\.: .* on Discord/);
  });

  it('a command added to the definitions reaches Discord typed from its zod schema, with no Discord code', async () => {
    // As a chart command might be written: positional HOST [GPU] [hours], and flags of each kind.
    const plot = defineCommand({
      name: 'plot',
      summary: 'Memory chart of one GPU',
      usage: 'plot HOST [GPU] [hours] [--theme NAME] [--scale N] [--raw]',
      options: z
        .object({
          _: z.tuple([
            z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/),
            z.coerce.number().int().min(0).max(63).optional(),
            z.coerce.number().int().min(1).max(168).optional(),
          ]),
          theme: z.enum(['light', 'dark']).optional(),
          scale: z.coerce.number().min(0.5).max(4).optional(),
          raw: z.boolean().optional(),
        })
        .passthrough(),
      async run(o) {
        return { title: `plot ${JSON.stringify(o)}`, severity: 'info', sections: [] };
      },
    });
    const withPlot = [...commands, plot];
    const built = buildDiscordCommands(withPlot);
    expect(parityProblems(withPlot, built.json)).toEqual([]);
    const sub = ((built.json.options ?? []) as Opt[]).find((o) => o.name === 'plot')!;
    expect(sub.type).toBe(T.Subcommand);
    expect(sub.options).toEqual([
      expect.objectContaining({ name: 'host', type: T.String, required: true, autocomplete: true }),
      expect.objectContaining({ name: 'gpu', type: T.Integer, required: false, min_value: 0, max_value: 63, autocomplete: true }),
      expect.objectContaining({ name: 'hours', type: T.Integer, required: false, min_value: 1, max_value: 168 }),
      expect.objectContaining({
        name: 'theme',
        type: T.String,
        choices: [
          { name: 'light', value: 'light' },
          { name: 'dark', value: 'dark' },
        ],
      }),
      expect.objectContaining({ name: 'scale', type: T.Number, min_value: 0.5, max_value: 4 }),
      expect.objectContaining({ name: 'raw', type: T.Boolean }),
    ]);
    const registry = new CommandRegistry(withPlot);
    const values: Record<string, string | number | boolean> = { host: 'gpu1', gpu: 3, hours: 24, theme: 'dark', scale: 1.5, raw: true };
    const { invocation } = interactionInvocation(built.route(null, 'plot')!, (n) => values[n]) as { invocation: CommandInvocation };
    // Handed over as Discord typed it: positional words are words (as typed), flags keep their type.
    expect(invocation).toEqual({ command: 'plot', options: { _: ['gpu1', '3', '24'], theme: 'dark', scale: 1.5, raw: true }, text: '' });
    const result = await registry.dispatch(invocation, { platform: 'discord', userId: 'U1', isAdmin: true, services: deps.services });
    expect(result.outcome).toBe('ok');
    expect(JSON.parse(result.reply.title.slice(5))).toMatchObject({ _: ['gpu1', 3, 24], theme: 'dark', scale: 1.5, raw: true });
    // The same options typed on Slack reach the command the same (a typed line also passes what follows the name as `text`).
    const typed = await registry.dispatch('/gpu plot gpu1 3 24 --theme=dark --scale=1.5 --raw', {
      platform: 'slack',
      userId: 'U1',
      isAdmin: true,
      services: deps.services,
    });
    const { text: typedText, ...typedOptions } = JSON.parse(typed.reply.title.slice(5));
    expect(typedText).toBe('gpu1 3 24 --theme=dark --scale=1.5 --raw');
    const { text: givenText, ...givenOptions } = JSON.parse(result.reply.title.slice(5));
    expect(givenText).toBe('');
    expect(typedOptions).toEqual(givenOptions);
  });

  it('uses contexts and integration_types, not the deprecated dm_permission, and stays within Discord limits', () => {
    expect(set.json).not.toHaveProperty('dm_permission');
    expect(set.json.contexts).toEqual([0, 1]); // Guild, BotDM
    expect(set.json.integration_types).toEqual([0]); // GuildInstall
    const walk = (opts: Opt[], depth: number) => {
      expect(opts.length).toBeLessThanOrEqual(25);
      // Required options come first (Discord rejects a command otherwise).
      const firstOptional = opts.findIndex((o) => o.type > T.SubcommandGroup && !o.required);
      if (firstOptional >= 0) expect(opts.slice(firstOptional).every((o) => !o.required)).toBe(true);
      for (const o of opts as (Opt & { description: string; description_localizations?: Record<string, string> })[]) {
        expect(o.name).toMatch(/^[-_a-z0-9]{1,32}$/);
        expect(o.description.length).toBeGreaterThan(0);
        expect(o.description.length).toBeLessThanOrEqual(100);
        for (const l of Object.values(o.description_localizations ?? {})) expect(l.length).toBeLessThanOrEqual(100);
        if (o.options) walk(o.options, depth + 1);
      }
      expect(depth).toBeLessThanOrEqual(2);
    };
    walk(set.json.options ?? [], 0);
    // Discord's 8000 characters: names, descriptions and choices of the command and all its options,
    // each localized field counted once, at its longest localization.
    type Sized = {
      name: string;
      description?: string;
      description_localizations?: Record<string, string>;
      options?: Sized[];
      choices?: { name: string; value: unknown }[];
    };
    const size = (o: Sized): number =>
      o.name.length +
      Math.max(o.description?.length ?? 0, ...Object.values(o.description_localizations ?? {}).map((l) => l.length)) +
      (o.choices ?? []).reduce((n, c) => n + c.name.length + String(c.value).length, 0) +
      (o.options ?? []).reduce((n, c) => n + size(c), 0);
    expect(size(set.json as unknown as Sized)).toBeLessThan(8000);
  });
});
