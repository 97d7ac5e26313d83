import { didYouMean } from '../core/did-you-mean.js';
export class UsageError extends Error {}

/** Splits argv into flags it knows and positionals; an unknown flag is a usage error. */
export function parseArgs(args: string[], spec: { booleans?: string[]; values?: string[] }) {
  const flags: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-' || !a.startsWith('-')) {
      positionals.push(a);
      continue;
    }
    const [key, inline] = a.replace(/^--?/, '').split(/=(.*)/s, 2);
    if (spec.booleans?.includes(key)) flags[key] = true;
    else if (spec.values?.includes(key)) {
      const v = inline ?? args[++i];
      if (v === undefined) throw new UsageError(`--${key} needs a value`);
      flags[key] = v;
    } else {
      const meant = didYouMean(key, [...(spec.booleans ?? []), ...(spec.values ?? [])]);
      throw new UsageError(`unknown option ${a.slice(0, 40)}${meant ? `; did you mean --${meant}?` : ''}`);
    }
  }
  return { flags, positionals };
}
