// What the paste alone decides (issue 23's done-when): each blind split's labels come from its whole thread (the fix that
// worked there), but a user pastes only the log. Helpers who never saw the thread, the labels or the bot's replies labelled
// blind10 (two of them, independently) and blind11 (one) from the paste alone: category and the one first lever they would
// give, and whether the paste decided it or they guessed (paste-only-labels.json beside each split's cases.json). Their
// agreement with the thread's labels is the ceiling a diagnosis from the paste can be measured against; the READMEs state
// the figures this test recomputes, so the two stay true together. Only aggregate lines are printed (kept so when blind11 and blind12 were untouched; they are read splits since stop 40).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExpertCase } from './eval-score.js';
import { CATEGORIES as CATEGORY_LIST } from '../../src/diagnose/rule-types.js';

const ROOT = resolve(import.meta.dirname, '../fixtures/untuned');
// The labellers were given the engine's category vocabulary.
const CATEGORIES = new Set<string>(CATEGORY_LIST);
// The vocabulary the labellers were given: the scorer's lever keys, plus "other".
const LEVERS = new Set([
  'batch',
  'batch_accumulate',
  'imgsz',
  'cache_off',
  'expandable_segments',
  'free_or_move_gpu',
  'quantize_or_smaller_model',
  'offload_or_zero',
  'checkpointing',
  'amp',
  'workers',
  'shm_size',
  'low_cpu_mem_usage',
  'leak_fix',
  'no_grad',
  'eval_accumulation',
  'host_ram_or_swap',
  'find_leak',
  'gather_per_batch',
  'framework_version',
  'gpu_memory_utilization',
  'xla_mem_fraction',
  'nccl_timeout_debug',
  'driver_fix',
  'not_memory',
  'other',
]);
interface PasteLabel {
  category: string;
  lever: string;
  decidable: 'yes' | 'guess';
  fix: string;
}
type Row = { file: string; a: PasteLabel; b?: PasteLabel };
const sameLever = (x: string, y: string) => x === y || (['batch', 'batch_accumulate'].includes(x) && ['batch', 'batch_accumulate'].includes(y));

function agreement(cases: ExpertCase[], rows: Row[], who: 'a' | 'b') {
  let category = 0,
    lever = 0,
    of = 0,
    decided = 0,
    decidedRight = 0;
  for (const c of cases) {
    const l = rows.find((r) => r.file === c.file)![who]!;
    if (c.labels.includes(l.category)) category++;
    if (!c.expected_lever) continue;
    of++;
    const right = sameLever(l.lever, c.expected_lever);
    if (right) lever++;
    if (l.decidable === 'yes') {
      decided++;
      if (right) decidedRight++;
    }
  }
  return `category ${category}/${cases.length}, lever ${lever}/${of} (decided by the paste ${decidedRight}/${decided})`;
}

describe.each([
  { group: 'blind10', labellers: ['a', 'b'] as const },
  { group: 'blind11', labellers: ['a'] as const },
  { group: 'blind12', labellers: ['a'] as const },
  { group: 'blind13', labellers: ['a'] as const },
  { group: 'blind14', labellers: ['a'] as const },
])('$group: paste-only labels', ({ group, labellers }) => {
  const dir = join(ROOT, group);
  const cases = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8')) as ExpertCase[];
  const rows = JSON.parse(readFileSync(join(dir, 'paste-only-labels.json'), 'utf8')) as Row[];
  it('one paste-only label per case and labeller, in the vocabulary they were given', () => {
    expect(rows.map((r) => r.file).sort()).toEqual(cases.map((c) => c.file).sort());
    for (const r of rows)
      for (const who of labellers) {
        const l = r[who]!;
        expect(CATEGORIES.has(l.category), `${r.file}: ${l.category}`).toBe(true);
        expect(LEVERS.has(l.lever), `${r.file}: ${l.lever}`).toBe(true);
        expect(['yes', 'guess'], r.file).toContain(l.decidable);
        expect(l.fix.length, r.file).toBeGreaterThan(10);
      }
  });
  it('the README states the agreement these labels have with the thread labels', () => {
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    for (const who of labellers) {
      const line = agreement(cases, rows, who);
      console.log(`paste-only labeller ${who} (${group}): ${line}`);
      expect(readme).toContain(line);
    }
  });
});
