// zod's own messages for the issues a command's options can raise (a word where a number goes, too
// many words, a value not among the choices) from the catalogue: made in English, word for word as
// zod writes them (config errors read the same), with t('en', 'usage.zod.*'), so the registry's
// localize() shows them in the asker's language like every other usage message. Issues not listed
// here keep zod's own text.
import { z } from 'zod';
import { t, type MessageKey, type Vars } from './i18n.js';

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
