// Line handling shared by every parser: split a paste into lines and undo what chat clients,
// terminals and log collectors add around tool output (ANSI colours, `> ` quote markers, CRs).
// Everything here is a single left-to-right pass, so cost is linear in the input.

/**
 * ANSI escapes: CSI ("ESC [ params final", colours), OSC ("ESC ] ... BEL" or "ESC ] ... ESC \\",
 * hyperlinks/titles) and two-byte escapes. Every branch uses disjoint character classes in
 * sequence, so matching never backtracks more than the escape's own length.
 */
const ANSI = /\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[(-/][ -~]|[@-Z\\-_])?/g;

export function stripAnsi(line: string): string {
  return line.indexOf('\x1b') === -1 ? line : line.replace(ANSI, '');
}

/** Drop leading markdown/e-mail quote markers: "> ", "> > ", ">>". */
export function stripQuoteMarkers(line: string): string {
  const first = line.charCodeAt(0);
  if (first !== 62 && first !== 32 && first !== 9) return line; // not '>', ' ', '\t'
  let i = 0;
  const n = line.length;
  for (;;) {
    let j = i;
    while (j < n && isSpaceCode(line.charCodeAt(j))) j++;
    if (j < n && line.charCodeAt(j) === 62) i = j + 1;
    else break;
  }
  if (i === 0) return line;
  // Keep the content's own indentation after a single separating space.
  return line.charCodeAt(i) === 32 ? line.slice(i + 1) : line.slice(i);
}

const isSpaceCode = (c: number) => c === 32 || c === 9;

/** One pasted line as the tool printed it. */
export function cleanLine(line: string): string {
  return stripQuoteMarkers(stripAnsi(line));
}

/**
 * Split and clean a whole paste. Whitespace-only lines become "" and runs of them collapse into
 * one: to every parser a blank line is just a separator, and a paste of 20 million newlines
 * should not become 20 million array entries.
 */
export function toCleanLines(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let pos = 0;
  let lastBlank = false;
  // Next \n and \r at or after pos, searched again only once passed, so the whole split is one pass.
  let nl = -1;
  let cr = -1;
  while (pos <= n) {
    if (lastBlank) {
      // Skip a run of empty lines in a tight loop.
      let c = text.charCodeAt(pos);
      while (c === 10 || c === 13) c = text.charCodeAt(++pos);
    }
    if (nl !== n && nl < pos) nl = indexOrEnd(text, '\n', pos);
    if (cr !== n && cr < pos) cr = indexOrEnd(text, '\r', pos);
    const end = nl < cr ? nl : cr;
    const line = end === pos ? '' : cleanLine(text.slice(pos, end));
    // Lone \r also ends a line; \r\n is one ending.
    pos = end === cr && text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
    if (line === '' || isBlank(line)) {
      if (!lastBlank) out.push('');
      lastBlank = true;
    } else {
      out.push(line);
      lastBlank = false;
    }
  }
  return out;
}

function indexOrEnd(text: string, ch: string, from: number): number {
  const i = text.indexOf(ch, from);
  return i === -1 ? text.length : i;
}

export function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 11 && c !== 12 && c !== 0xa0) return false;
  }
  return true;
}

/** Index of the first / last character that is not a space or tab (-1 if none). */
export function firstNonSpace(line: string): number {
  for (let i = 0; i < line.length; i++) if (!isSpaceCode(line.charCodeAt(i))) return i;
  return -1;
}

export function lastNonSpace(line: string): number {
  for (let i = line.length - 1; i >= 0; i--) if (!isSpaceCode(line.charCodeAt(i))) return i;
  return -1;
}

/** Whitespace-separated tokens of a (short) string. */
export function tokens(s: string): string[] {
  const t = s.trim();
  return t === '' ? [] : t.split(/\s+/);
}
