// Facts read from a log's structure, not its phrasing: a traceback through generation is inference (no
// training batch to halve, no AMP to turn on), and a "key:" at the end of a line names nothing on the
// next one. Real log: a text-generation-inference client's trace (tuned corpus, source in its cases.json).
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseOutput } from './corpus-case.js';

const root = resolve(import.meta.dirname, '../..');

async function best(rel: string) {
  const stdout = await diagnoseOutput(['--json', resolve(root, rel)]);
  return JSON.parse(stdout).diagnoses[0] as { facts: Record<string, unknown>; fixes: { summary: string; changes: Record<string, unknown> }[] };
}

describe('facts from the log structure', () => {
  it('an OOM whose traceback runs through generate() is inference: no batch halved, no AMP, the inference levers instead', async () => {
    const d = await best('test/fixtures/untuned/llm/383-cuda_oom.log');
    expect(d.facts.generating).toBe(true);
    expect(d.fixes.some((f) => typeof f.changes.batch === 'number')).toBe(false);
    expect(d.fixes.map((f) => f.summary).join('\n')).not.toMatch(/Enable mixed precision|Halve the batch/);
    expect(d.fixes.map((f) => f.summary).join('\n')).toMatch(/This is inference[^\n]*quantized[^\n]*max_new_tokens/);
  });

  it('"Command for running the model:" then "--model-id X" on the next line: the model is X, not "--model-id"', async () => {
    const d = await best('test/fixtures/untuned/llm/383-cuda_oom.log');
    expect(d.facts.model).toBe('CodeLlama-34b-Instruct-hf');
    expect(d.facts.paramsB).toBe(34);
  });

  it('a YOLOv5 training OOM is not inference: its batch is still halved', async () => {
    const d = await best('test/fixtures/eval-dev/003-cuda_oom.log');
    expect(d.facts.generating).toBeUndefined();
    expect(d.fixes[0].changes.batch).toBe(8);
  });

  it('prose states the batch without "=": "set batch_size 1." is batch 1, so no fix halves it', async () => {
    const d = await best('test/fixtures/untuned/llm/366-cuda_oom.log');
    expect(d.facts.batch).toBe(1);
    expect(d.fixes.some((f) => typeof f.changes.batch === 'number')).toBe(false);
  });
});
