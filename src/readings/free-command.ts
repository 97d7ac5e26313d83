// The `free` command line, when a paste shows it ("$ free -m", "root@gpu01:~# free --si -hw"):
// the flags say what unit the bare numbers below it are in, which the numbers alone cannot.
import { MAX_ROW_CHARS } from './limits.js';
import { tokens } from './lines.js';

export interface FreeUnits {
  /** Bytes per unit of a bare number (no suffix). Undefined: not known, infer it. */
  unitBytes?: number;
  /** Human-readable suffixes without "i" (G, M) are powers of 1000 (--si). */
  si?: boolean;
}

const SHIFT: Record<string, number> = { b: 0, k: 1, m: 2, g: 3, t: 4, p: 5 };
const LONG_UNITS: Record<string, string> = { bytes: 'b', kibi: 'k', mebi: 'm', gibi: 'g', tebi: 't', pebi: 'p' };
const LONG_SI_UNITS: Record<string, string> = { kilo: 'k', mega: 'm', giga: 'g', tera: 't', peta: 'p' };

/** The units a `free` invocation prints in, or null when the line is not one. */
export function freeCommandUnits(line: string): FreeUnits | null {
  if (line.length > MAX_ROW_CHARS) return null;
  // Cheap test first: a "free" word (start or after space or '/', then end, space or '-' flags).
  const word = line.lastIndexOf('free');
  if (word === -1) return null;
  const next = line.charCodeAt(word + 4);
  if (!(Number.isNaN(next) || next === 32 || next === 9)) return null;
  const t = tokens(line);
  const at = t.findIndex((w) => w === 'free' || w.endsWith('/free'));
  if (at < 0) return null;
  // Only a prompt or a wrapper may come before it ("$", "user@host:~$", "sudo", "watch"), so prose
  // like "GPU memory is free" is not taken for a command.
  if (at > 0 && !/[$#>%]$/.test(t[at - 1]) && !['sudo', 'watch', 'time', 'command'].includes(t[at - 1])) return null;
  let letter = 'k';
  let si = false;
  for (const flag of t.slice(at + 1)) {
    if (/^\d+$/.test(flag)) continue; // argument of -s / -c
    if (flag.startsWith('--')) {
      const name = flag.slice(2);
      if (name === 'si') si = true;
      else if (LONG_UNITS[name]) letter = LONG_UNITS[name];
      else if (LONG_SI_UNITS[name]) {
        letter = LONG_SI_UNITS[name];
        si = true;
      }
      continue;
    }
    if (!flag.startsWith('-')) return null; // "free of charge", a pipe, ...
    // Short unit flags are -b -k -m -g only (-t is --total, -h/-w/-l/-v change layout).
    for (const c of flag.slice(1)) if (c === 'b' || c === 'k' || c === 'm' || c === 'g') letter = c;
  }
  return { unitBytes: (si && letter !== 'b' ? 1000 : 1024) ** SHIFT[letter], si };
}
