// Line handling shared by every parser: split a paste into lines and undo what chat clients,
// terminals and log collectors add around tool output (ANSI colours, `> ` quote markers, CRs).
// Everything here is a single left-to-right pass, so cost is linear in the input.

/** Lines longer than this cannot be nvidia-smi table / free rows; parsers skip them. */
export const MAX_ROW_CHARS = 4096;

/** Split on \n, \r\n and lone \r (progress bars redraw with \r). */
export function splitLines(text: string): string[] {
  return text.split(/\r\n|\n|\r/);
}

/** Remove ANSI escape sequences (CSI, OSC and two-byte escapes). */
export function stripAnsi(line: string): string {
  if (line.indexOf('\x1b') === -1 && line.indexOf('\x9b') === -1) return line;
  let out = '';
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line.charCodeAt(i);
    if (c === 0x1b || c === 0x9b) {
      let j = c === 0x9b ? i + 1 : i + 2;
      const kind = c === 0x9b ? '[' : line[i + 1];
      if (kind === '[') {
        // CSI: parameter/intermediate bytes 0x20-0x3f, then one final byte 0x40-0x7e.
        while (j < n && line.charCodeAt(j) >= 0x20 && line.charCodeAt(j) <= 0x3f) j++;
        j++;
      } else if (kind === ']') {
        // OSC: runs until BEL or ESC \.
        while (j < n && line.charCodeAt(j) !== 0x07 && !(line.charCodeAt(j) === 0x1b && line[j + 1] === '\\')) j++;
        j += line.charCodeAt(j) === 0x07 ? 1 : 2;
      }
      i = Math.min(j, n);
      continue;
    }
    // Copy the run of ordinary characters up to the next escape in one slice.
    let k = i + 1;
    while (k < n && line.charCodeAt(k) !== 0x1b && line.charCodeAt(k) !== 0x9b) k++;
    out += line.slice(i, k);
    i = k;
  }
  return out;
}

/** Drop leading markdown/e-mail quote markers: "> ", "> > ", ">>". */
export function stripQuoteMarkers(line: string): string {
  let i = 0;
  const n = line.length;
  for (;;) {
    let j = i;
    while (j < n && (line[j] === ' ' || line[j] === '\t')) j++;
    if (j < n && line[j] === '>') i = j + 1;
    else break;
  }
  if (i === 0) return line;
  // Keep the content's own indentation after a single separating space.
  return line[i] === ' ' ? line.slice(i + 1) : line.slice(i);
}

/** One pasted line as the tool printed it. */
export function cleanLine(line: string): string {
  return stripQuoteMarkers(stripAnsi(line));
}

/** Split and clean a whole paste. */
export function toCleanLines(text: string): string[] {
  const lines = splitLines(text);
  for (let i = 0; i < lines.length; i++) lines[i] = cleanLine(lines[i]);
  return lines;
}

/** Whitespace-separated tokens of a (short) string. */
export function tokens(s: string): string[] {
  const t = s.trim();
  return t === '' ? [] : t.split(/\s+/);
}
