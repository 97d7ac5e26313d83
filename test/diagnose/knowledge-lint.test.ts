// Fails the build when a rule lacks what makes it trustworthy: its id as folder name, a source,
// at least one match and one no-match log, at least one fix, a valid category and loadable patterns.
import { readdirSync, existsSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadRuleBase, RuleLoadError } from '../../src/diagnose/rule-base.js';
import { CATEGORIES } from '../../src/diagnose/rule-types.js';

const base = await loadRuleBase();
const count = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.log')).length : 0);

describe('knowledge lint', () => {
  it.each(base.rules.map((r, i) => [r.id, i] as const))('%s is complete', (id, i) => {
    const rule = base.rules[i];
    const dir = base.dirs[i];
    expect(basename(dir)).toBe(id);
    expect(rule.source.seed || rule.source.issue || rule.source.note).toBeTruthy();
    expect(count(join(dir, 'match'))).toBeGreaterThanOrEqual(1);
    expect(count(join(dir, 'no-match'))).toBeGreaterThanOrEqual(1);
    expect(rule.fixes.length).toBeGreaterThanOrEqual(1);
    expect(CATEGORIES).toContain(rule.category);
  });

  it('every category has a rule', () => {
    const used = new Set(base.rules.map((r) => r.category));
    expect(CATEGORIES.filter((c) => !used.has(c))).toEqual([]);
  });

  it('every seed document has a rule that cites it', () => {
    const seeds = new Set(base.rules.map((r) => r.source.seed).filter(Boolean));
    expect([...seeds].sort()).toEqual(['000', '001', '002', '003']);
  });

  const brokenBase = (yaml: string) => {
    const root = mkdtempSync(join(tmpdir(), 'kb-'));
    mkdirSync(join(root, 'bad-rule'));
    writeFileSync(join(root, 'bad-rule', 'rule.yaml'), yaml);
    return root;
  };

  it('a broken rule fails loudly, naming the file and the field', async () => {
    const root = brokenBase(
      'id: bad-rule\ntitle: Broken rule here\ncategory: not_a_category\npriority: 5\npatterns: [abc]\nfixes: [{kind: reduce_batch}]\nsource: {note: x}\n',
    );
    await expect(loadRuleBase(root)).rejects.toThrow(RuleLoadError);
    await expect(loadRuleBase(root)).rejects.toThrow(/bad-rule[/\\]rule\.yaml: category/);
  });

  it('a pattern re2 cannot compile (backreference) is rejected with its field', async () => {
    const root = brokenBase(
      'id: bad-rule\ntitle: Broken rule here\ncategory: cuda_oom\npriority: 5\npatterns: ["(a+)\\\\1"]\nfixes: [{kind: reduce_batch}]\nsource: {note: x}\n',
    );
    await expect(loadRuleBase(root)).rejects.toThrow(/rule\.yaml: patterns\.0: not a valid re2 pattern/);
  });
});
