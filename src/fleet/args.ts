// The words of `/gpu fit` and `/gpu notify`, read strictly. Every pattern is anchored with bounded
// repetition (linear on any input); the words are already capped by the command-line tokenizer.
import { message, type Message } from '../core/message.js';
import { joinSizeWords, sizeMiB } from '../core/size.js';

/** Largest memory one GPU offers today is under 300 GB; a request over 1 TiB per GPU is a typo. */
export const MAX_SIZE_MiB = 1024 * 1024;
export const MAX_COUNT = 16;
export const MAX_HOURS = 168;
/** How long a `notify` subscription waits when the user gives no `for`. */
export const DEFAULT_NOTIFY_HOURS = 12;

const SIZE_HINT = message('usage.size.hint');
/** `40G`, `40GB`, `7.5GiB`, `40 G`, `24000M` as MiB (binary units: src/core/size.ts); a usage message for anything else. */
export function parseSize(word: string): { mib: number } | { error: Message } {
  const mib = sizeMiB(word);
  if (mib === undefined) {
    const shown = word.length > 20 ? word.slice(0, 20) + '…' : word;
    if (/^\d{1,7}(?:\.\d{1,3})?$/.test(word)) return { error: message('usage.size.didYouMean', { hint: SIZE_HINT, word }) };
    return { error: message('usage.size.notOne', { hint: SIZE_HINT, word: shown }) };
  }
  if (mib < 1) return { error: message('usage.size.positive') };
  if (mib > MAX_SIZE_MiB) return { error: message('usage.size.max', { word }) };
  return { mib };
}

const DURATION = /^(\d{1,4})(h|d)?$/i;

/** `12h`, `12`, `2d` as hours, 1..168. */
export function parseHours(word: string): { hours: number } | { error: Message } {
  const m = DURATION.exec(word);
  if (!m) return { error: message('usage.duration.format') };
  const hours = Number(m[1]) * (m[2]?.toLowerCase() === 'd' ? 24 : 1);
  if (hours < 1 || hours > MAX_HOURS) return { error: message('usage.duration.range', { max: MAX_HOURS }) };
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
export function parseNotifyWords(typed: readonly string[]): NotifyWords | { error: Message } {
  const words = joinSizeWords(typed); // `notify 40 G` as `notify 40G`
  const [first, ...rest] = words;
  if (first === undefined) return { error: message('usage.notify.what') };
  const verb = first.toLowerCase();
  if (verb === 'list') return rest.length ? { error: message('usage.notify.listAlone') } : { action: 'list' };
  if (verb === 'cancel') {
    if (rest.length !== 1 || !/^#?\d{1,9}$/.test(rest[0])) return { error: message('usage.notify.id') };
    return { action: 'cancel', id: Number(rest[0].replace('#', '')) };
  }
  const args = verb === 'add' ? rest : words;
  if (!args.length) return { error: message('usage.notify.needsSize') };
  const size = parseSize(args[0]);
  if ('error' in size) return size;
  let count = 1;
  let hours = DEFAULT_NOTIFY_HOURS;
  let i = 1;
  if (i < args.length && /^\d{1,3}$/.test(args[i])) {
    count = Number(args[i]);
    if (count < 1 || count > MAX_COUNT) return { error: message('usage.count.range', { max: MAX_COUNT }) };
    i++;
  }
  if (i < args.length && args[i].toLowerCase() === 'for') i++;
  if (i < args.length) {
    const h = parseHours(args[i]);
    if ('error' in h) return { error: message('usage.notify.for', { error: h.error }) };
    hours = h.hours;
    i++;
  } else if (args[i - 1]?.toLowerCase() === 'for') return { error: message('usage.notify.forWhat') };
  if (i < args.length) return { error: message('usage.notify.unexpected', { word: args[i].slice(0, 20) }) };
  return { action: 'add', sizeMiB: size.mib, size: args[0], count, hours };
}
