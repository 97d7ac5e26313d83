// Reads a command's `usage` line (the `/gpu` text grammar that the console and Slack accept) and its
// zod options into a neutral description: the forms it takes (`hosts add NAME ...`), each form's
// positional arguments, flags and free text, and what type each value has. The Discord command JSON is
// generated from this, so a command added to commands/ reaches Discord without Discord-specific code.
// Usage strings are written by us, not users; still, everything here is linear string scanning.
import type { AnyCommand } from '../../core/registry.js';

export type ValueType = 'string' | 'integer' | 'number' | 'boolean';

export interface ValueShape {
  type: ValueType;
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
  choices?: (string | number)[];
  description?: string;
}

export interface UsageArg {
  /** positional: a word after the form's literal words; flag: --key VALUE; text: everything after the command name, verbatim. */
  kind: 'positional' | 'flag' | 'text';
  /** As the usage writes it: HOST, user@host[:port], --key PATH, <paste a log or traceback>. */
  placeholder: string;
  /** An option name valid on Discord (lowercase, 1-32 of [a-z0-9_-]). */
  name: string;
  required: boolean;
  /** Several positional words (`[HOST...]`). */
  variadic?: boolean;
  /** The zod key a flag fills (the flag's own name). */
  key?: string;
  value: ValueShape;
}

export interface UsageForm {
  command: string;
  /** Literal words after the command name that pick this form (`add` in `hosts add NAME ...`); [] for a single form. */
  words: string[];
  args: UsageArg[];
  /** The form as the usage writes it, command name included. */
  text: string;
}

/**
 * Names for placeholders that are not a plain word. Anything else becomes its lowercased word, or
 * a sanitised form of it, so a new command never needs an entry here.
 */
const PLACEHOLDER_NAMES: Record<string, string> = {
  'user@host[:port]': 'target',
  'SHA256:...': 'fingerprint',
};

/** Splits on blanks and `|` outside [...] and <...>. Returns tokens, with '|' kept as its own token. */
function tokens(usage: string): string[] {
  const out: string[] = [];
  let cur = '';
  let depth = 0;
  for (const ch of usage) {
    if (ch === '[' || ch === '<') depth++;
    else if ((ch === ']' || ch === '>') && depth > 0) depth--;
    if (depth === 0 && (ch === ' ' || ch === '\t' || ch === '|')) {
      if (cur) out.push(cur);
      cur = '';
      if (ch === '|') out.push('|');
      continue;
    }
    cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}

export function optionName(placeholder: string): string {
  const known = PLACEHOLDER_NAMES[placeholder];
  if (known) return known;
  const cleaned = placeholder
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return (cleaned || 'value').slice(0, 32);
}

const LITERAL = /^[a-z][a-z0-9-]*$/;

function parseArg(token: string): Omit<UsageArg, 'value'> {
  let t = token;
  let required = true;
  if (t.startsWith('<') && t.endsWith('>')) return { kind: 'text', placeholder: t, name: 'text', required: false };
  if (t.startsWith('[') && t.endsWith(']')) {
    required = false;
    t = t.slice(1, -1);
  }
  const flag = /^--([a-z][a-z0-9-]{0,30})(?:[ =](.+))?$/.exec(t);
  if (flag) return { kind: 'flag', placeholder: t, name: flag[1], key: flag[1], required };
  const variadic = /^[A-Za-z][\w-]*\.\.\.$/.test(t);
  const word = variadic ? t.slice(0, -3) : t;
  return { kind: 'positional', placeholder: t, name: optionName(word), required, ...(variadic ? { variadic: true } : {}) };
}

/** The parts of a zod 4 schema's internals this reads (the definition and a leaf's bounds). */
interface ZodDef {
  type: string;
  innerType?: unknown;
  in?: unknown;
  out?: unknown;
  entries?: Record<string, string | number>;
  values?: unknown[];
  element?: unknown;
  items?: unknown[];
  rest?: unknown;
}
interface ZodLike {
  _zod?: { def: ZodDef };
  shape?: Record<string, unknown>;
  description?: string;
  isInt?: boolean;
  minValue?: unknown;
  maxValue?: unknown;
  minLength?: unknown;
  maxLength?: unknown;
}

const WRAPPERS = new Set(['optional', 'default', 'nullable', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** Peels optional/default/pipe wrappers off a zod schema (bounded: schemas are ours, never cyclic). */
function unwrap(schema: unknown): ZodLike | undefined {
  let cur = schema as ZodLike | undefined;
  for (let i = 0; i < 10 && cur?._zod; i++) {
    const def = cur._zod.def;
    if (WRAPPERS.has(def.type)) cur = def.innerType as ZodLike | undefined;
    // A transform's schema is its input; a preprocess (`z.preprocess`: a transform piped into a schema) is its output.
    else if (def.type === 'pipe') cur = ((def.in as ZodLike | undefined)?._zod?.def.type === 'transform' ? def.out : def.in) as ZodLike | undefined;
    else return cur;
  }
  return cur;
}

const finite = (n: unknown): number | undefined => (typeof n === 'number' && Number.isFinite(n) ? n : undefined);

/** What a zod leaf schema says about a value: its type, bounds and choices, when that is clear. */
export function valueShape(schema: unknown): ValueShape {
  const s = unwrap(schema);
  const description = (schema as ZodLike | undefined)?.description ?? s?.description;
  const base = description ? { description } : {};
  const def = s?._zod?.def;
  if (!s || !def) return { type: 'string', ...base };
  switch (def.type) {
    case 'number': {
      const min = finite(s.minValue);
      const max = finite(s.maxValue);
      return { type: s.isInt ? 'integer' : 'number', ...base, ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
    }
    case 'boolean':
      return { type: 'boolean', ...base };
    case 'enum': {
      const choices = Object.values(def.entries ?? {});
      const numeric = choices.every((c) => typeof c === 'number');
      return { type: numeric ? (choices.every(Number.isInteger) ? 'integer' : 'number') : 'string', choices, ...base };
    }
    case 'literal': {
      const choices = (def.values ?? []) as (string | number)[];
      return { type: choices.every((c) => typeof c === 'number') ? 'number' : 'string', choices, ...base };
    }
    case 'string': {
      const minLength = finite(s.minLength);
      const maxLength = finite(s.maxLength);
      return { type: 'string', ...base, ...(minLength ? { minLength } : {}), ...(maxLength !== undefined ? { maxLength } : {}) };
    }
    default:
      return { type: 'string', ...base };
  }
}

/** The zod object behind a command's options, if it is one. */
export function optionShape(command: AnyCommand): Record<string, unknown> | undefined {
  const s = unwrap(command.options);
  return s?.shape && typeof s.shape === 'object' ? s.shape : undefined;
}

/** The schema of the n-th positional word: the array's element, or the tuple's item (or its rest). */
function positionalSchema(shape: Record<string, unknown> | undefined, index: number): unknown {
  const p = unwrap(shape?._);
  const def = p?._zod?.def;
  if (!def) return undefined;
  if (def.type === 'array') return def.element;
  if (def.type === 'tuple') return def.items?.[index] ?? def.rest;
  return undefined;
}

/** The forms of a command, as its usage declares them, typed from its zod options. */
export function usageForms(command: AnyCommand): UsageForm[] {
  const all = tokens(command.usage);
  const body = all[0] === command.name ? all.slice(1) : all;
  const alternatives: string[][] = [[]];
  for (const t of body) {
    if (t === '|') alternatives.push([]);
    else alternatives[alternatives.length - 1].push(t);
  }
  // Several alternatives that each start with a literal word are subcommands (hosts list|add ...|remove ...).
  const split = alternatives.length > 1 && alternatives.every((a) => a.length > 0 && LITERAL.test(a[0]));
  const shape = optionShape(command);
  const mentioned = new Set<string>();
  const forms = (split ? alternatives : [alternatives.flat().filter((t) => t !== '|')]).map((alt) => {
    const words = split ? [alt[0]] : [];
    // The literal words are positional words too (`hosts add gpu1 ...` gives _ = [add, gpu1, ...]).
    let position = words.length;
    const args: UsageArg[] = (split ? alt.slice(1) : alt).map((t) => {
      const a = parseArg(t);
      if (a.kind === 'flag') {
        mentioned.add(a.key!);
        // A bare [--flag] is a switch; a flag with a value takes the type of its zod key.
        const isSwitch = !/[ =]/.test(a.placeholder);
        return { ...a, value: isSwitch ? { type: 'boolean' as const } : valueShape(shape?.[a.key!]) };
      }
      if (a.kind === 'text') return { ...a, value: { type: 'string' as const } };
      const value = valueShape(positionalSchema(shape, position));
      position++;
      return { ...a, value };
    });
    return { command: command.name, words, args, text: [command.name, ...alt].join(' ') };
  });
  // Flags the schema declares but the usage does not show are still accepted in text: offer them on every form.
  for (const key of Object.keys(shape ?? {})) {
    if (key === '_' || key === 'text' || mentioned.has(key)) continue;
    const value = valueShape(shape![key]);
    for (const f of forms) f.args.push({ kind: 'flag', placeholder: `--${key}`, name: optionName(key), key, required: false, value });
  }
  return forms;
}
