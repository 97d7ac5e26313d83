// The words of `/gpu fit` and `/gpu notify`, read strictly. Every pattern is anchored with bounded
// repetition (linear on any input); the words are already capped by the command-line tokenizer.

/** Largest memory one GPU offers today is under 300 GB; a request over 1 TiB per GPU is a typo. */
export const MAX_SIZE_MiB = 1024 * 1024;
export const MAX_COUNT = 16;
export const MAX_HOURS = 168;
/** How long a `notify` subscription waits when the user gives no `for`. */
export const DEFAULT_NOTIFY_HOURS = 12;

export const SIZE_HINT = 'SIZE: a number with G, GiB, M or MiB, e.g. 40G, 7.5GiB or 24000M';
const SIZE = /^(\d{1,7}(?:\.\d{1,3})?)(G|GiB|M|MiB)$/i;

/** `40G`, `7.5GiB`, `24000M`, `24000MiB` as MiB; an error line for anything else. */
export function parseSize(word: string): { mib: number } | { error: string } {
  const m = SIZE.exec(word);
  if (!m) {
    const shown = word.length > 20 ? word.slice(0, 20) + '…' : word;
    if (/^\d{1,7}(?:\.\d{1,3})?$/.test(word)) return { error: `${SIZE_HINT} (did you mean ${word}G?)` };
    return { error: `${SIZE_HINT}; "${shown}" is not one` };
  }
  const n = Number(m[1]);
  const mib = Math.ceil(m[2].toUpperCase().startsWith('G') ? n * 1024 : n);
  if (mib < 1) return { error: 'SIZE: more than 0' };
  if (mib > MAX_SIZE_MiB) return { error: `SIZE: at most 1024 GiB per GPU (${word} asked)` };
  return { mib };
}

const DURATION = /^(\d{1,4})(h|d)?$/i;

/** `12h`, `12`, `2d` as hours, 1..168. */
export function parseHours(word: string): { hours: number } | { error: string } {
  const m = DURATION.exec(word);
  if (!m) return { error: 'a duration: hours (12h or 12) or days (2d), up to 168h' };
  const hours = Number(m[1]) * (m[2]?.toLowerCase() === 'd' ? 24 : 1);
  if (hours < 1 || hours > MAX_HOURS) return { error: `a duration of 1-${MAX_HOURS} hours (a week)` };
  return { hours };
}

export function formatMiB(mib: number): string {
  return Math.abs(mib) >= 1024 ? `${(mib / 1024).toFixed(1)} GiB` : `${Math.round(mib)} MiB`;
}

export type NotifyWords =
  { action: 'add'; sizeMiB: number; size: string; count: number; hours: number } | { action: 'list' } | { action: 'cancel'; id: number };

/**
 * `notify [add] SIZE [count] [[for] 12h]`, `notify list`, `notify cancel ID`. The count is a bare whole
 * number, the duration carries h/d or follows `for`, so `notify 40G for 12h` and `notify 40G 2 12h` both read.
 */
export function parseNotifyWords(words: readonly string[]): NotifyWords | { error: string } {
  const [first, ...rest] = words;
  if (first === undefined) return { error: 'notify SIZE [count] [for 12h], notify list or notify cancel ID' };
  const verb = first.toLowerCase();
  if (verb === 'list') return rest.length ? { error: 'notify list takes nothing after it' } : { action: 'list' };
  if (verb === 'cancel') {
    if (rest.length !== 1 || !/^#?\d{1,9}$/.test(rest[0])) return { error: 'ID: the number `/gpu notify list` shows, e.g. notify cancel 3' };
    return { action: 'cancel', id: Number(rest[0].replace('#', '')) };
  }
  const args = verb === 'add' ? rest : words;
  if (!args.length) return { error: 'notify add needs a SIZE, e.g. notify 40G' };
  const size = parseSize(args[0]);
  if ('error' in size) return size;
  let count = 1;
  let hours = DEFAULT_NOTIFY_HOURS;
  let i = 1;
  if (i < args.length && /^\d{1,3}$/.test(args[i])) {
    count = Number(args[i]);
    if (count < 1 || count > MAX_COUNT) return { error: `count: 1-${MAX_COUNT} GPUs on one host` };
    i++;
  }
  if (i < args.length && args[i].toLowerCase() === 'for') i++;
  if (i < args.length) {
    const h = parseHours(args[i]);
    if ('error' in h) return { error: `for: ${h.error}` };
    hours = h.hours;
    i++;
  } else if (args[i - 1]?.toLowerCase() === 'for') return { error: 'for: how long to wait, e.g. for 12h' };
  if (i < args.length) return { error: `unexpected "${args[i].slice(0, 20)}": notify SIZE [count] [for 12h]` };
  return { action: 'add', sizeMiB: size.mib, size: args[0], count, hours };
}
