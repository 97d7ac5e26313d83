// The RuleTester of the knowledge base (like ESLint's): every rule must win on each of its match/
// logs and must not win on any of its no-match/ logs (near misses).
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { diagnose } from '../../src/diagnose/diagnose.js';

const base = await loadRuleBase();
const logs = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.log')) : []);

describe.each(base.rules.map((rule, i) => ({ id: rule.id, dir: base.dirs[i] })))('rule $id', ({ id, dir }) => {
  it.each(logs(join(dir, 'match')))('wins on match/%s', (file) => {
    const result = diagnose(readFileSync(join(dir, 'match', file), 'utf8'), base);
    expect(result.diagnoses[0]?.rule).toBe(id);
    expect(result.diagnoses[0].fixes.length).toBeGreaterThan(0);
  });
  it.each(logs(join(dir, 'no-match')))('does not win on no-match/%s', (file) => {
    const result = diagnose(readFileSync(join(dir, 'no-match', file), 'utf8'), base);
    expect(result.diagnoses[0]?.rule).not.toBe(id);
  });
});
