// Finds which rules apply to a normalised log. One RE2.Set pass over the whole text says which
// patterns occur at all (linear time, like grep -f); only those are then located line by line.
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
    p.regex.lastIndex = 0;
    let count = 0;
    let last = -1;
    // Walk every match to learn the last line (the last error weighs most), keeping a bounded sample.
    for (let m = p.regex.exec(text); m; m = p.regex.exec(text)) {
      const line = lineAt(starts, m.index);
      if (line !== last) {
        if (count < MAX_LINES_PER_RULE) s.lines.push(line);
        count++;
        last = line;
      }
      if (m[0].length === 0) p.regex.lastIndex++;
    }
    if (last > s.lastLine) s.lastLine = last;
  }
  const hits: RuleHit[] = [];
  for (const [rule, s] of byRule) {
    if (s.lines.length === 0 || s.excluded) continue;
    const needed = base.rules[rule].requires?.length ?? 0;
    if (needed > 0 && (requiredPresent.get(rule) ?? 0) < needed) continue;
    s.lines.sort((a, b) => a - b);
    hits.push({ rule, lines: [...new Set(s.lines)], lastLine: s.lastLine });
  }
  return { hits, starts };
}
