// Text width in terminal columns and word wrapping by it: CJK characters, fullwidth forms and emoji take
// two columns, so Chinese help and tables line up. Used by /gpu help; any renderer that pads or wraps
// text for a terminal can use it.
const WIDE_CHARS =
  '\\u1100-\\u115f\\u2e80-\\u303e\\u3041-\\u33ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\ua000-\\ua4cf\\uac00-\\ud7a3\\uf900-\\ufaff\\ufe30-\\ufe4f\\uff00-\\uff60\\uffe0-\\uffe6\\u{1f300}-\\u{1faff}';
const WIDE = new RegExp(`[${WIDE_CHARS}]`, 'u');
/** One wide character (with the closing punctuation that must not start a line), or a run of narrow ones. */
const PIECES = new RegExp(`[${WIDE_CHARS}][，。：；、）！？」』]*|[^${WIDE_CHARS}]+`, 'gu');

/** Columns `s` takes in a terminal: CJK characters, fullwidth forms and emoji take two, everything else one. */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += WIDE.test(ch) ? 2 : 1;
  return w;
}

/**
 * Words of `text` in lines of at most `width` display columns, each after `indent`; breaks at spaces and
 * `|`, and between CJK characters (Chinese has no spaces): such a piece joins its neighbour without a blank.
 */
export function wrap(text: string, width: number, indent = ''): string[] {
  const pieces: { w: string; glued: boolean }[] = [];
  for (const word of text.split(/(?<=\|)|\s+/).filter(Boolean)) {
    const parts = word.match(PIECES) ?? [word];
    parts.forEach((w, i) => pieces.push({ w, glued: i > 0 }));
  }
  const lines: string[] = [];
  let line = '';
  for (const { w, glued } of pieces) {
    const sep = line === '' || glued || line.endsWith('|') || w.startsWith('|') ? '' : ' ';
    if (line !== '' && displayWidth(indent) + displayWidth(line) + sep.length + displayWidth(w) > width) {
      lines.push(indent + line);
      line = w;
    } else line += sep + w;
  }
  if (line) lines.push(indent + line);
  return lines;
}
