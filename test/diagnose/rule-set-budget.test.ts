// re2 compiles a rule set into one program under a fixed memory budget, so a rule base past it once failed to load
// as a whole ("RE2.Set could not be compiled") although every pattern compiled alone: the next rule added would
// have stopped every diagnosis. Principle: the number and size of rules never decide whether the base loads; the
// set is split until each part compiles, and a log gets the same rules either way. Tested through loadRuleBase on a
// copy of knowledge/ grown past the budget with rules of the usual shape.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compilePatternSets, loadRuleBase } from '../../src/diagnose/rule-base.js';
import { diagnose } from '../../src/diagnose/diagnose.js';

const KNOWLEDGE = resolve(import.meta.dirname, '../../knowledge');
const dir = mkdtempSync(join(tmpdir(), 'gd-rule-budget-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A message rule of the usual shape: a fixed format with bounded gaps and a captured figure. */
const ruleYaml = (i: number) =>
  [
    `id: made-up-stack-${i}`,
    `title: Made-up stack ${i} ran out of memory`,
    'category: cuda_oom',
    'priority: 190',
    `description: A stand-in for a stack's own allocation message, number ${i}.`,
    'patterns:',
    `  - 'madeupstack${i} allocator[^\\n]{0,200}out of memory[^\\n]{0,100}?(\\d{1,6}) MiB'`,
    'fixes:',
    '  - kind: advice',
    `    text: 'Made-up stack ${i}: lower its own memory setting'`,
    'source:',
    '  note: made up for the rule-set budget test',
    '',
  ].join('\n');

describe('a rule base larger than one re2 program still loads and matches', () => {
  it('splits the pattern set in parts that compile, each pattern keeping its own index', () => {
    const heavy = Array.from({ length: 120 }, (_, i) => `madeupstack${i} allocator[^\\n]{0,200}out of memory[^\\n]{0,100}?(\\d{1,6}) MiB`);
    expect(() => compilePatternSets(heavy.slice(0, 1), 'iu')).not.toThrow();
    const sets = compilePatternSets(heavy, 'iu');
    expect(sets.length).toBeGreaterThan(1);
    const line = Buffer.from('madeupstack97 allocator: out of memory, 512 MiB');
    const found = sets.flatMap(({ set, offset }) => set.match(line).map((i) => i + offset));
    expect(found).toEqual([97]);
  });

  it('knowledge/ plus 120 more rules loads, a made-up rule matches its line, a real log keeps its diagnosis', async () => {
    cpSync(KNOWLEDGE, join(dir, 'knowledge'), { recursive: true });
    for (let i = 0; i < 120; i++) {
      mkdirSync(join(dir, 'knowledge', `made-up-stack-${i}`));
      writeFileSync(join(dir, 'knowledge', `made-up-stack-${i}`, 'rule.yaml'), ruleYaml(i));
    }
    const grown = await loadRuleBase(join(dir, 'knowledge'));
    const real = await loadRuleBase();
    expect(grown.sets.length).toBeGreaterThan(real.sets.length);
    const made = diagnose('madeupstack42 allocator failed: out of memory while reserving 2048 MiB', grown);
    expect(made.diagnoses[0]?.rule).toBe('made-up-stack-42');
    const log = readFileSync(resolve(import.meta.dirname, '../fixtures/eval-dev/003-cuda_oom.log'), 'utf8');
    const a = diagnose(log, grown).diagnoses.map((d) => [d.rule, d.fixes[0]?.summary]);
    const b = diagnose(log, real).diagnoses.map((d) => [d.rule, d.fixes[0]?.summary]);
    expect(a).toEqual(b);
  });
});
