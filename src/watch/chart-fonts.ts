// The fonts the charts are drawn with (assets/fonts, shipped with the bot: the image has none) and text
// widths measured from their own metrics. ECharts lays out legends, titles and axis labels with a
// measureText it cannot do without a canvas (its fallback guesses Helvetica widths); DejaVu Sans runs
// ~10% wider, so guessed widths make legend entries overlap. Widths here come from the TTF's cmap and
// hmtx tables, the same advances resvg uses when it draws the text.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FONT_FAMILY = 'DejaVu Sans';
const FILES = { regular: 'DejaVuSans.ttf', bold: 'DejaVuSans-Bold.ttf' } as const;

/** assets/fonts, found from the sources (src/watch/) and from the bundle (dist/) alike. */
export function fontDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const candidate = join(dir, 'assets', 'fonts');
    if (existsSync(join(candidate, FILES.regular))) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`chart fonts not found: assets/fonts/${FILES.regular} must ship with the bot`);
}

export const fontFiles = (): string[] => Object.values(FILES).map((f) => join(fontDir(), f));

/** Advance widths (in em) by code point, from a TrueType font's cmap (format 4) and hmtx tables. */
interface Metrics {
  advance(codePoint: number): number;
}

function parseMetrics(buf: Buffer): Metrics {
  const tables = new Map<string, number>();
  const numTables = buf.readUInt16BE(4);
  for (let i = 0; i < numTables; i++) {
    const rec = 12 + 16 * i;
    tables.set(buf.toString('latin1', rec, rec + 4), buf.readUInt32BE(rec + 8));
  }
  const table = (tag: string) => {
    const off = tables.get(tag);
    if (off === undefined) throw new Error(`font has no ${tag} table`);
    return off;
  };
  const unitsPerEm = buf.readUInt16BE(table('head') + 18);
  const numberOfHMetrics = buf.readUInt16BE(table('hhea') + 34);
  const hmtx = table('hmtx');
  const glyphAdvance = (glyph: number) => buf.readUInt16BE(hmtx + 4 * Math.min(glyph, numberOfHMetrics - 1)) / unitsPerEm;
  // The Unicode BMP subtable (platform 3 encoding 1, or platform 0), format 4: segments of code points.
  const cmap = table('cmap');
  let sub = -1;
  for (let i = 0; i < buf.readUInt16BE(cmap + 2); i++) {
    const rec = cmap + 4 + 8 * i;
    const platform = buf.readUInt16BE(rec);
    const encoding = buf.readUInt16BE(rec + 2);
    const off = cmap + buf.readUInt32BE(rec + 4);
    if (buf.readUInt16BE(off) === 4 && ((platform === 3 && encoding === 1) || platform === 0)) sub = off;
  }
  if (sub < 0) throw new Error('font has no format 4 Unicode cmap');
  const segX2 = buf.readUInt16BE(sub + 6);
  const ends = sub + 14;
  const starts = ends + segX2 + 2;
  const deltas = starts + segX2;
  const ranges = deltas + segX2;
  const glyphOf = (cp: number): number => {
    if (cp > 0xffff) return 0;
    for (let s = 0; s < segX2; s += 2) {
      if (cp > buf.readUInt16BE(ends + s)) continue;
      const start = buf.readUInt16BE(starts + s);
      if (cp < start) return 0;
      const delta = buf.readUInt16BE(deltas + s);
      const rangeOffset = buf.readUInt16BE(ranges + s);
      if (rangeOffset === 0) return (cp + delta) & 0xffff;
      const g = buf.readUInt16BE(ranges + s + rangeOffset + 2 * (cp - start));
      return g === 0 ? 0 : (g + delta) & 0xffff;
    }
    return 0;
  };
  const cache = new Map<number, number>();
  return {
    advance(cp) {
      let w = cache.get(cp);
      if (w === undefined) cache.set(cp, (w = glyphAdvance(glyphOf(cp))));
      return w;
    },
  };
}

let metrics: { regular: Metrics; bold: Metrics } | undefined;
const loaded = () =>
  (metrics ??= {
    regular: parseMetrics(readFileSync(join(fontDir(), FILES.regular))),
    bold: parseMetrics(readFileSync(join(fontDir(), FILES.bold))),
  });

/** Width in px of `text` in a CSS font shorthand as ECharts writes it ("bold 16px DejaVu Sans"). */
export function measureText(text: string, font?: string): { width: number } {
  const size = Number(/(\d+(?:\.\d+)?)px/.exec(font ?? '')?.[1] ?? 12);
  const face = /\b(bold|[6-9]00)\b/.test(font ?? '') ? loaded().bold : loaded().regular;
  let em = 0;
  for (const ch of text) em += face.advance(ch.codePointAt(0)!);
  return { width: em * size };
}
