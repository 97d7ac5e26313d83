// The RuleTester of the knowledge base (like ESLint's): every rule must win on each of its match/
// logs and must not win on any of its no-match/ logs (near misses). On a match, every fix the rule
// gives is one of the fixes it names, reads as a finished sentence, and its numbers follow from the
// log's own facts (a smaller batch, fewer workers, a smaller image; a command that differs).
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { diagnose, type Diagnosis } from '../../src/diagnose/diagnose.js';

const base = await loadRuleBase();
const logs = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.log')) : []);

/** Checks each fix of a diagnosis against the rule that made it and the facts of the log. */
function expectFixesFollowFromFacts(d: Diagnosis): void {
  const rule = base.rules.find((r) => r.id === d.rule)!;
  const named = new Set(rule.fixes.map((f) => f.kind));
  const incident = d.incident;
  expect(d.fixes.length, 'a matched rule gives at least one fix').toBeGreaterThan(0);
  for (const fix of d.fixes) {
    expect(named.has(fix.kind), `${fix.kind} is one of ${d.rule}'s fixes`).toBe(true);
    // Every placeholder filled, no missing number printed.
    expect(fix.summary).not.toMatch(/\{\w+\}|\bundefined\b|\bNaN\b|\bnull\b|Infinity/);
    expect(fix.summary.length).toBeGreaterThan(20);
    const c = fix.changes;
    for (const key of ['batch', 'workers', 'imgsz', 'accumulate'] as const) {
      if (c[key] === undefined) continue;
      expect(Number.isInteger(c[key]), `${key}=${String(c[key])} is a whole number`).toBe(true);
      expect(c[key] as number).toBeGreaterThanOrEqual(key === 'workers' ? 0 : 1);
    }
    // At batch 1 there is nothing to halve: the fix says so and changes nothing.
    if (fix.kind === 'reduce_batch' && c.batch === undefined) expect(fix.summary).toMatch(/^The batch is already 1/);
    if (fix.kind === 'reduce_batch' && c.batch !== undefined) {
      expect(c.batch as number).toBeLessThanOrEqual(Math.floor(incident.run.batch! / 2));
      // The effective batch is kept: new batch x accumulation covers the old one, without a spare step.
      const before = incident.run.batch! * (incident.run.accumulate ?? 1);
      expect((c.batch as number) * (c.accumulate as number)).toBeGreaterThanOrEqual(before);
      expect((c.batch as number) * ((c.accumulate as number) - 1)).toBeLessThan(before);
      const stated = incident.run.batchDefaultOf
        ? ` (${incident.run.batchDefaultOf}'s default)`
        : incident.run.batchFromShape
          ? ` (the leading dimension of the tensor that did not fit, ${incident.run.batchFromShape})`
          : '';
      expect(fix.summary).toContain(`${incident.run.batch}${stated} -> ${c.batch}`);
    }
    if (fix.kind === 'reduce_workers' && c.workers !== undefined) {
      if (incident.host.workers !== undefined) expect(c.workers as number).toBeLessThan(incident.host.workers);
      expect(fix.summary).toContain(incident.host.workers !== undefined ? `workers=${incident.host.workers} -> ${c.workers}` : `workers=${c.workers}`);
    }
    if (fix.kind === 'reduce_imgsz') {
      expect(c.imgsz as number).toBeLessThan(incident.run.imgsz!);
      expect((c.imgsz as number) % 32).toBe(0);
    }
    // shm_size's command is the docker run line to use, not the training command corrected.
    if (fix.command !== undefined && fix.kind !== 'shm_size') {
      expect(Object.keys(c).length, 'a command comes with changes').toBeGreaterThan(0);
      if (incident.run.commandLine) expect(fix.command).not.toBe(incident.run.commandLine);
    }
  }
}

describe.each(base.rules.map((rule, i) => ({ id: rule.id, dir: base.dirs[i] })))('rule $id', ({ id, dir }) => {
  it.each(logs(join(dir, 'match')))('wins on match/%s', (file) => {
    const result = diagnose(readFileSync(join(dir, 'match', file), 'utf8'), base);
    expect(result.diagnoses[0]?.rule).toBe(id);
    expectFixesFollowFromFacts(result.diagnoses[0]);
  });
  it.each(logs(join(dir, 'no-match')))('does not win on no-match/%s', (file) => {
    const result = diagnose(readFileSync(join(dir, 'no-match', file), 'utf8'), base);
    expect(result.diagnoses[0]?.rule).not.toBe(id);
  });
});
