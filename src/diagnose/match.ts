// Finds which rules apply to a normalised log. One RE2.Set pass over the log, chunk by chunk, says
// which patterns occur and where (linear time, like grep -f); each pattern is then located line by line
// only in the last chunks that hold it, since the last error weighs most.
import type RE2 from 're2';
import type { RuleBase } from './rule-base.js';
import type { LogText } from './normalize.js';

export interface RuleHit {
  rule: number;
  /** Line numbers (0-based, in the normalised text) where the rule's own patterns matched. */
  lines: number[];
  lastLine: number;
  /** Added from the report's own words (told-hits.ts), not from a rule's patterns: weaker than any rule's own hit. */
  told?: boolean;
}

const MAX_LINES_PER_RULE = 50;
const CHUNK_BYTES = 256 * 1024;

export function matchRules(log: LogText, base: RuleBase): RuleHit[] {
  const chunks = splitChunks(log);
  // pattern index -> chunks (in order) where it occurs
  const where = new Map<number, number[]>();
  chunks.forEach((c, ci) => {
    const text = log.buf.subarray(c.from, c.to);
    for (const { set, offset } of base.sets) {
      for (const found of set.match(text)) {
        const index = found + offset;
        const list = where.get(index);
        if (list) list.push(ci);
        else where.set(index, [ci]);
      }
    }
  });
  const present = [...where.keys()];
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
    const lines = lastMatchingLines(log, chunks, where.get(index)!, p.regex, MAX_LINES_PER_RULE);
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
  // A recognition rule (answers) speaks only where the rule it answers did not recognise the failure itself,
  // and never past that rule's own near-miss guards (its excludes).
  const matched = new Set(hits.map((h) => h.rule));
  return hits.filter((h) => {
    const answers = base.rules[h.rule].answers;
    if (answers === undefined) return true;
    const target = base.rules.findIndex((r) => r.id === answers);
    return !matched.has(target) && !byRule.get(target)?.excluded;
  });
}

interface Chunk {
  from: number;
  to: number;
}

/** Byte ranges of about CHUNK_BYTES that start and end at line boundaries. */
function splitChunks(log: LogText): Chunk[] {
  const chunks: Chunk[] = [];
  const total = log.buf.length;
  for (let from = 0; from < total || chunks.length === 0;) {
    let to = Math.min(total, from + CHUNK_BYTES);
    if (to < total) {
      const nl = log.buf.indexOf(10, to);
      to = nl === -1 ? total : nl + 1;
    }
    chunks.push({ from, to });
    if (to <= from) break;
    from = to;
  }
  return chunks;
}

/** The last `max` lines a pattern matches, searching only the chunks that hold it, last first. */
function lastMatchingLines(log: LogText, chunks: Chunk[], holding: number[], regex: RE2, max: number): number[] {
  const found: number[][] = [];
  let count = 0;
  for (let k = holding.length - 1; k >= 0 && count < max; k--) {
    const { from, to } = chunks[holding[k]];
    const slice = log.buf.subarray(from, to);
    const lines: number[] = [];
    regex.lastIndex = 0;
    for (let m = regex.exec(slice); m; m = regex.exec(slice)) {
      const line = log.lineAt(from + m.index);
      if (lines[lines.length - 1] !== line) lines.push(line);
      if (m[0].length === 0) regex.lastIndex++;
    }
    found.unshift(lines);
    count += lines.length;
  }
  return found.flat().slice(-max);
}
