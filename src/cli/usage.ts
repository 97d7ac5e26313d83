// Argument parsing for the gpu-doctor subcommands: node:util parseArgs (strict: an unknown option, a
// missing value or a value given to a flag is an error), with its errors turned into one-line usage errors
// that name the nearest known option ("unknown option --jsno; did you mean --json?"). `--` ends the options,
// so a file named `--json` is `diagnose -- --json`. The chat grammar (/gpu ...) is src/core/invocation.ts.
import { parseArgs as parseNodeArgs, type ParseArgsConfig } from 'node:util';
import { didYouMean } from '../core/did-you-mean.js';

export class UsageError extends Error {}

export interface ArgSpec<B extends string, V extends string> {
  /** Flags without a value (`--json`). */
  booleans?: readonly B[];
  /** Options that take a value (`--config FILE` or `--config=FILE`). */
  values?: readonly V[];
}

export type Flags<B extends string, V extends string> = { [K in B]?: boolean } & { [K in V]?: string };

type Options = NonNullable<ParseArgsConfig['options']>;

function optionsOf(spec: ArgSpec<string, string>): Options {
  const options: Options = {};
  for (const b of spec.booleans ?? []) options[b] = { type: 'boolean' };
  for (const v of spec.values ?? []) options[v] = { type: 'string' };
  return options;
}

/** Splits argv into the options the spec knows and positionals; anything else is a UsageError. */
export function parseArgs<const B extends string = never, const V extends string = never>(
  args: string[],
  spec: ArgSpec<B, V>,
): { flags: Flags<B, V>; positionals: string[] } {
  const options = optionsOf(spec);
  try {
    const { values, positionals } = parseNodeArgs({ args, options, strict: true, allowPositionals: true });
    return { flags: { ...values } as Flags<B, V>, positionals };
  } catch (e) {
    throw usageErrorFor(e, args, options);
  }
}

/** The parser's error as one line a person can act on, found again from the tokens of a lenient parse. */
function usageErrorFor(e: unknown, args: string[], options: Options): UsageError {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const fallback = new UsageError(((e as Error | undefined)?.message ?? String(e)).split('\n')[0].slice(0, 200));
  if (code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && code !== 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return fallback;
  const { tokens } = parseNodeArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  for (const t of tokens) {
    if (t.kind !== 'option') continue;
    const known = options[t.name];
    if (!known) {
      // `-json` is read as the short flags -j -s -o -n: the suggestion compares the word as typed.
      const typed = (args[t.index] ?? t.rawName).replace(/^--?/, '').split('=')[0];
      const meant = didYouMean(typed, Object.keys(options));
      const shown = t.rawName.startsWith('--') ? t.rawName : (args[t.index] ?? t.rawName).split('=')[0];
      return new UsageError(`unknown option ${shown.slice(0, 40)}${meant ? `; did you mean --${meant}?` : ''}`);
    }
    if (known.type === 'boolean' && t.inlineValue) return new UsageError(`--${t.name} takes no value`);
    if (known.type === 'string') {
      if (t.value === undefined) return new UsageError(`--${t.name} needs a value`);
      if (!t.inlineValue && t.value.startsWith('-') && t.value !== '-')
        return new UsageError(
          `--${t.name} needs a value, not the option ${t.value.slice(0, 40)} (write --${t.name}=${t.value.slice(0, 40)} if that is the value)`,
        );
    }
  }
  return fallback;
}

/** True when args ask for help (--help or -h before a `--`), whatever else they hold. */
export function asksForHelp(args: string[]): boolean {
  const { tokens } = parseNodeArgs({ args, strict: false, allowPositionals: true, tokens: true, options: { help: { type: 'boolean', short: 'h' } } });
  return tokens.some((t) => t.kind === 'option' && t.name === 'help');
}
