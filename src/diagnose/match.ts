// Finds which rules apply to a normalised log. One RE2.Set pass over the whole text says which
// patterns occur at all (linear time, like grep -f); only those are then located line by line.
import type RE2 from 're2';
import type { RuleBase } from './rule-base.js';
import { lineAt, lineStarts } from './normalize.js';

export interface RuleHit {
  rule: number;
  /** Line numbers (0-based, in the normalised text) where the rule's own patterns matched. */
  lines: number[];
  lastLine: number;
}

const MAX_LINES_PER_RULE = 50;

export function matchRules(text: string, base: RuleBase): { hits: RuleHit[]; starts: Uint32Array } {
  const present = new Set(base.set.match(text));
  const starts = lineStarts(text);
  const byRule = new Map<number, { lines: number[]; lastLine: number; requiresMissing: boolean; excluded: boolean }>();
  const state = (rule: number) => {
    let s = byRule.get(rule);
    if (!s) {
      const r = base.rules[rule];
      s = { lines: [], lastLine: -1, requiresMissing: (r.requires?.length ?? 0) > 0, excluded: false };
      byRule.set(rule, s);
    }
    return s;
  };
  // requires: every listed pattern must be present.
  const requiredPresent = new Map<number, number>();
  for (const index of present) {
    const p = base.patterns[index];
    if (p.role === 'requires') requiredPresent.set(p.rule, (requiredPresent.get(p.rule) ?? 0) + 1);
    if (p.role === 'excludes') state(p.rule).excluded = true;
  }
  for (const index of present) {
    const p = base.patterns[index];
    if (p.role !== 'patterns') continue;
    const s = state(p.rule);
    const lines = lastMatchingLines(text, starts, p.regex, MAX_LINES_PER_RULE);
    s.lines.push(...lines);
    if (lines.length && lines[lines.length - 1] > s.lastLine) s.lastLine = lines[lines.length - 1];
  }
  const hits: RuleHit[] = [];
  for (const [rule, s] of byRule) {
    if (s.lines.length === 0 || s.excluded) continue;
    const needed = base.rules[rule].requires?.length ?? 0;
    if (needed > 0 && (requiredPresent.get(rule) ?? 0) < needed) continue;
    const lines = [...new Set(s.lines)].sort((a, b) => a - b).slice(-MAX_LINES_PER_RULE);
    hits.push({ rule, lines, lastLine: s.lastLine });
  }
  return { hits, starts };
}

/**
 * The last `max` lines a pattern matches. The last error weighs most, and a progress-line pattern can
 * match every line of a 20 MB log, so search growing tails of the text instead of walking every match.
 */
function lastMatchingLines(text: string, starts: Uint32Array, regex: RE2, max: number): number[] {
  for (let size = 64 * 1024; ; size *= 8) {
    const from = size >= text.length ? 0 : starts[lineAt(starts, text.length - size)];
    const lines: number[] = [];
    regex.lastIndex = 0;
    const slice = from === 0 ? text : text.slice(from);
    for (let m = regex.exec(slice); m; m = regex.exec(slice)) {
      const line = lineAt(starts, from + m.index);
      if (lines[lines.length - 1] !== line) lines.push(line);
      if (lines.length > 4 * max) lines.splice(0, lines.length - max);
      if (m[0].length === 0) regex.lastIndex++;
    }
    if (lines.length >= max || from === 0) return lines.slice(-max);
  }
}
