// Checks a chart passes before resvg draws it: resvg is native code, and geometry it did not expect
// (hundreds of legend rows pushing the plot to a negative height) made it panic, which aborts the whole
// process. Both checks are linear scans; a chart that fails one is not drawn and its reply falls back to
// text.
import type { MemoryChartSpec, MemoryLine } from './chart.js';
import { MAX_CHART_MIB, MAX_POINTS, MAX_PROCESS_LINES } from './chart-data.js';

/** CSS size bounds of a chart (the PNG is twice as large). */
export const MIN_CHART_SIDE = 200;
export const MAX_CHART_SIDE = 2000;
/** Lines a spec may hold: the bounded processes, their "others", the total. */
const MAX_LINES = MAX_PROCESS_LINES + 2;
/** chartPoints() leaves at most MAX_POINTS per line, plus a gap marker per bucket. */
const MAX_LINE_POINTS = 2 * MAX_POINTS;
/** Years 1970..2286 in ms: a time outside is a corrupt row. */
const MAX_TIME_MS = 1e13;
const MAX_TEXT_CHARS = 400;
/** An SVG larger than this, or with more elements, is not one of our charts. */
export const MAX_SVG_CHARS = 8 * 1024 * 1024;
export const MAX_SVG_ELEMENTS = 50_000;
/** Any coordinate or length in the SVG; the canvas is at most MAX_CHART_SIDE wide. */
export const MAX_SVG_NUMBER = 1e5;

const finiteIn = (v: number, lo: number, hi: number) => typeof v === 'number' && Number.isFinite(v) && v >= lo && v <= hi;

function lineProblem(l: MemoryLine): string | null {
  if (typeof l.name !== 'string' || l.name.length > MAX_TEXT_CHARS) return 'a line name is too long';
  if (l.points.length > MAX_LINE_POINTS) return `a line has ${l.points.length} points`;
  for (const [t, v] of l.points) {
    if (!finiteIn(t, 0, MAX_TIME_MS)) return 'a time is out of range';
    if (v !== null && !finiteIn(v, 0, MAX_CHART_MIB)) return 'a value is out of range';
  }
  return null;
}

/** Why this spec must not be drawn, or null: sizes, counts, text lengths and every number bounded and finite. */
export function specProblem(spec: MemoryChartSpec): string | null {
  for (const side of [spec.width, spec.height]) if (side !== undefined && !finiteIn(side, MIN_CHART_SIDE, MAX_CHART_SIDE)) return 'the size is out of range';
  for (const text of [spec.title, spec.subtitle ?? '', spec.timeZone])
    if (typeof text !== 'string' || text.length > MAX_TEXT_CHARS) return 'a title is too long';
  const lines = [...spec.processes, ...(spec.total ? [spec.total] : [])];
  if (lines.length > MAX_LINES) return `${lines.length} lines`;
  for (const l of lines) {
    const p = lineProblem(l);
    if (p) return p;
  }
  if (spec.utilization) {
    const u = spec.utilization;
    if (typeof u.name !== 'string' || u.name.length > MAX_TEXT_CHARS) return 'a line name is too long';
    if (u.points.length > MAX_LINE_POINTS) return `the utilisation has ${u.points.length} points`;
    for (const [t, v] of u.points) if (!finiteIn(t, 0, MAX_TIME_MS) || (v !== null && !finiteIn(v, 0, 100))) return 'the utilisation is out of range';
  }
  if (spec.capacity && !finiteIn(spec.capacity.mib, 0, MAX_CHART_MIB)) return 'the capacity is out of range';
  for (const fit of [spec.fit, spec.zoom?.fit]) {
    if (!fit) continue;
    if (![fit.from[0], fit.to[0]].every((t) => finiteIn(t, 0, MAX_TIME_MS))) return 'the fit is out of range';
    if (![fit.from[1], fit.to[1]].every((v) => finiteIn(v, -MAX_CHART_MIB, MAX_CHART_MIB))) return 'the fit is out of range';
  }
  if (spec.window && !(finiteIn(spec.window.fromMs, 0, MAX_TIME_MS) && finiteIn(spec.window.toMs, 0, MAX_TIME_MS))) return 'the window is out of range';
  return null;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * Why this SVG must not be drawn, or null: its size and element count bounded, and inside its tags
 * (text between tags is the labels, never geometry) no NaN or Infinity and no number beyond
 * MAX_SVG_NUMBER. One pass over the characters.
 */
export function svgProblem(svg: string): string | null {
  if (svg.length > MAX_SVG_CHARS) return `the SVG has ${svg.length} characters`;
  let inTag = false;
  let elements = 0;
  for (let i = 0; i < svg.length;) {
    const c = svg.charCodeAt(i);
    if (!inTag) {
      if (c === 60 /* < */) {
        inTag = true;
        if (++elements > MAX_SVG_ELEMENTS) return `the SVG has over ${MAX_SVG_ELEMENTS} elements`;
      }
      i++;
      continue;
    }
    if (c === 62 /* > */) {
      inTag = false;
      i++;
    } else if (c === 35 /* # */) {
      // A colour (#1e9999 is not a number).
      i++;
      while (i < svg.length && (isDigit(svg.charCodeAt(i)) || isLetter(svg.charCodeAt(i)))) i++;
    } else if (isLetter(c)) {
      const start = i;
      while (i < svg.length && isLetter(svg.charCodeAt(i))) i++;
      const word = svg.slice(start, i);
      if (word === 'NaN' || word === 'Infinity') return `the SVG has ${word} in its geometry`;
    } else if (isDigit(c) || (c === 46 /* . */ && isDigit(svg.charCodeAt(i + 1)))) {
      const start = i;
      while (i < svg.length && (isDigit(svg.charCodeAt(i)) || svg.charCodeAt(i) === 46)) i++;
      // An exponent only where digits follow it ("12em" is not one).
      const e = svg.charCodeAt(i);
      if (e === 101 || e === 69) {
        let j = i + 1;
        if (svg.charCodeAt(j) === 43 || svg.charCodeAt(j) === 45) j++;
        if (isDigit(svg.charCodeAt(j))) {
          while (j < svg.length && isDigit(svg.charCodeAt(j))) j++;
          i = j;
        }
      }
      const v = Number.parseFloat(svg.slice(start, i));
      if (!Number.isFinite(v) || Math.abs(v) > MAX_SVG_NUMBER) return `the SVG has the number ${svg.slice(start, Math.min(i, start + 24))} in its geometry`;
    } else i++;
  }
  return null;
}
