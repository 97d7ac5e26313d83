// zod's own messages for the issues a command's options can raise (a word where a number goes, too
// many words, a value not among the choices) from the catalogue (usage.zod.*): installed as zod's
// English messages (config errors read them), and made from the issue itself in the asker's language
// for a command's reply. Issues not listed here keep zod's own text.
import { z } from 'zod';
import { t, type Locale, type MessageKey, type Vars } from './i18n.js';
import { messageOfIssue, render } from './message.js';

/** zod's name for what it received (its parsedType, for the values a command line or YAML holds). */
function received(input: unknown): string | undefined {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'array';
  if (typeof input === 'number') return Number.isFinite(input) ? 'number' : String(input);
  if (typeof input === 'object') return Object.getPrototypeOf(input) === Object.prototype ? 'object' : undefined;
  return typeof input;
}

type Bound = 'exactly' | 'inclusive' | 'strict';
/** "Too big: expected array to have <=2 items", "Too small: expected number to be >=1", ...: by direction, what is sized, and how. */
const SIZE_KEYS: Record<'tooBig' | 'tooSmall', Record<'items' | 'chars' | 'value', Record<Bound, MessageKey>>> = {
  tooBig: {
    items: { exactly: 'usage.zod.tooBig.items.exactly', inclusive: 'usage.zod.tooBig.items.inclusive', strict: 'usage.zod.tooBig.items.strict' },
    chars: { exactly: 'usage.zod.tooBig.chars.exactly', inclusive: 'usage.zod.tooBig.chars.inclusive', strict: 'usage.zod.tooBig.chars.strict' },
    value: { exactly: 'usage.zod.tooBig.value.exactly', inclusive: 'usage.zod.tooBig.value.inclusive', strict: 'usage.zod.tooBig.value.strict' },
  },
  tooSmall: {
    items: { exactly: 'usage.zod.tooSmall.items.exactly', inclusive: 'usage.zod.tooSmall.items.inclusive', strict: 'usage.zod.tooSmall.items.strict' },
    chars: { exactly: 'usage.zod.tooSmall.chars.exactly', inclusive: 'usage.zod.tooSmall.chars.inclusive', strict: 'usage.zod.tooSmall.chars.strict' },
    value: { exactly: 'usage.zod.tooSmall.value.exactly', inclusive: 'usage.zod.tooSmall.value.inclusive', strict: 'usage.zod.tooSmall.value.strict' },
  },
};

type Issue = Parameters<NonNullable<NonNullable<Parameters<typeof z.config>[0]>['customError']>>[0];

/** The catalogue key and values of an issue's message, or undefined to leave it to zod. */
export function zodMessage(issue: Issue): { key: MessageKey; vars: Vars } | undefined {
  const i = issue;
  switch (i.code) {
    case 'invalid_type': {
      const got = received(i.input);
      return got === undefined || typeof i.expected !== 'string' ? undefined : { key: 'usage.zod.invalidType', vars: { expected: i.expected, received: got } };
    }
    case 'invalid_value': {
      const values = i.values as unknown[];
      if (!values.every((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) return undefined;
      const shown = values.map((v) => (typeof v === 'string' ? `"${v}"` : String(v)));
      return values.length === 1
        ? { key: 'usage.zod.invalidValue', vars: { value: shown[0] } }
        : { key: 'usage.zod.invalidOption', vars: { values: shown.join('|') } };
    }
    case 'too_big':
    case 'too_small': {
      const origin = i.origin as string | undefined;
      const unit =
        origin === 'array' ? 'items' : origin === 'string' ? 'chars' : origin === 'number' || origin === 'int' || origin === 'bigint' ? 'value' : undefined;
      if (!origin || !unit) return undefined;
      const how = i.exact ? 'exactly' : i.inclusive ? 'inclusive' : 'strict';
      const n = (i.code === 'too_big' ? i.maximum : i.minimum).toString();
      return { key: SIZE_KEYS[i.code === 'too_big' ? 'tooBig' : 'tooSmall'][unit][how], vars: { origin, n } };
    }
    default:
      return undefined;
  }
}

let installed = false;

/** Installs the messages as zod's global error map (once; command.ts does it when commands are defined). */
export function useCatalogueForZod(): void {
  if (installed) return;
  installed = true;
  z.config({
    customError: (issue) => {
      const m = zodMessage(issue);
      return m ? t('en', m.key, m.vars) : undefined;
    },
  });
}

/**
 * The words of a command's usage line that stand for its positional arguments, in order:
 * `chart HOST [GPU] [hours] [--theme light|dark]` gives HOST, GPU, hours (options and their values left out).
 * A last word ending in `...` (`status [HOST...]`) names every further argument.
 */
export function positionalNames(usage: string): string[] {
  const words = usage
    .replace(/\[--[^\]]*\]/g, ' ')
    .split(/\s+/)
    .slice(1)
    .filter((w) => w && !w.startsWith('--') && !w.startsWith('<'));
  return words.map((w) => w.replace(/[[\]]/g, ''));
}

/** The usage name of the argument at an issue's path: GPU for `_.1`, --theme for `theme`; undefined for the words as a whole. */
function argumentName(path: readonly PropertyKey[], usage: string): string | undefined {
  if (path[0] === '_') {
    if (typeof path[1] !== 'number') return undefined;
    const names = positionalNames(usage);
    const name = names[path[1]] ?? (names.at(-1)?.endsWith('...') ? names.at(-1) : undefined);
    return name ? name.replace(/\.\.\.$/, '') : `#${path[1] + 1}`;
  }
  return path.length ? `--${String(path[0])}` : undefined;
}

/** The fixed beginnings of zod's own messages (usage.zod.*, as installed above): anything else is a command's own wording, as it is. */
const ZOD_HEADS = ['Invalid input: expected ', 'Invalid option: expected one of ', 'Too big: expected ', 'Too small: expected '];
// A union's own message is the bare head: every branch failed (its branches say why).
const zodWording = (message: string) => message === 'Invalid input' || ZOD_HEADS.some((head) => message.startsWith(head));

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let cur = raw;
  for (const key of path) cur = cur && typeof cur === 'object' ? (cur as Record<PropertyKey, unknown>)[key] : undefined;
  return cur;
}

const hasValueAt = (raw: unknown, path: readonly PropertyKey[]) => valueAt(raw, path) !== undefined;

/** zod's own message for an issue in `locale`, made again from the issue (zod keeps no input in it: read from the raw invocation). */
function zodWords(issue: { message: string; path: readonly PropertyKey[] }, raw: unknown, locale: Locale | undefined): string {
  const m = zodMessage({ ...issue, input: valueAt(raw, issue.path) } as unknown as Issue);
  return m ? t(locale, m.key, m.vars) : issue.message;
}

/** What a person typed for an argument (the raw word before coercion), shortened for the reply. */
function typedAt(raw: unknown, path: readonly PropertyKey[]): string | undefined {
  let cur = raw;
  for (const key of path) cur = cur && typeof cur === 'object' ? (cur as Record<PropertyKey, unknown>)[key] : undefined;
  if (typeof cur !== 'string') return undefined;
  return cur.length > 40 ? cur.slice(0, 40) + '…' : cur;
}

/**
 * One argument's problem as a sentence naming the argument by its usage name, in the asker's language
 * ("GPU must be a number, not \"abc\"."), instead of zod's path and wording (`_.1: Invalid input: expected
 * number, received NaN`). A command's own message (a `.min(1, schemaMessage(...))`, a superRefine's
 * issueWith(...)) is its own wording, in the asker's language.
 */
export function argumentProblem(
  issue: { code: string; path: readonly PropertyKey[]; message: string; params?: unknown },
  usage: string,
  raw: unknown,
  locale: Locale | undefined,
): string {
  const own = messageOfIssue(issue);
  if (own) return render(locale, own);
  if (!zodWording(issue.message)) return issue.message;
  const name = argumentName(issue.path, usage);
  const command = usage.split(/\s+/)[0];
  // zod keeps no input in a finished issue: what was typed is read from the raw invocation at the path.
  const typed = typedAt(raw, issue.path);
  const i = issue as { code: string; expected?: string; minimum?: number | bigint; maximum?: number | bigint; origin?: string; values?: unknown[] };
  if (name === undefined) {
    // The positional words as a whole: too many, or too few (the first missing one named).
    const given = (raw as { _?: unknown } | undefined)?._;
    const words = Array.isArray(given) ? given.length : 0;
    if (i.code === 'too_big') return t(locale, 'usage.arg.tooMany', { command, n: String(i.maximum) });
    if (i.code === 'too_small') {
      const missing = positionalNames(usage)[words]?.replace(/\.\.\.$/, '');
      return missing ? t(locale, 'usage.arg.missing', { name: missing }) : t(locale, 'usage.arg.tooFew', { command, n: String(i.minimum) });
    }
    return zodWords(issue, raw, locale);
  }
  switch (i.code) {
    case 'invalid_type':
      if (typed === undefined && !hasValueAt(raw, issue.path)) return t(locale, 'usage.arg.missing', { name });
      if (i.expected === 'number' || i.expected === 'int')
        return typed === undefined ? t(locale, 'usage.arg.number', { name }) : t(locale, 'usage.arg.numberNot', { name, word: typed });
      return t(locale, 'usage.arg.invalid', { name });
    case 'invalid_value':
      return t(locale, 'usage.arg.oneOf', { name, values: (i.values ?? []).map(String).join(', '), word: typed ?? '' });
    case 'too_big':
      return i.origin === 'string'
        ? t(locale, 'usage.arg.longest', { name, n: String(i.maximum) })
        : t(locale, 'usage.arg.atMost', { name, n: String(i.maximum) });
    case 'too_small':
      return i.origin === 'string'
        ? t(locale, 'usage.arg.shortest', { name, n: String(i.minimum) })
        : t(locale, 'usage.arg.atLeast', { name, n: String(i.minimum) });
    case 'invalid_union': {
      // A word or a number (a GPU index or `all`): every branch failed; say what each accepts.
      const tried = ((issue as { errors?: { code: string; expected?: string; values?: unknown[] }[][] }).errors ?? []).flat();
      const words = tried.filter((b) => b.code === 'invalid_value').flatMap((b) => (b.values ?? []).map(String));
      const number = tried.some((b) => b.code === 'invalid_type' && (b.expected === 'number' || b.expected === 'int'));
      if (number && words.length) return t(locale, 'usage.arg.numberOrNot', { name, values: words.join(', '), word: typed ?? '' });
      return t(locale, 'usage.arg.invalid', { name });
    }
    default:
      return t(locale, 'usage.arg.invalid', { name });
  }
}
