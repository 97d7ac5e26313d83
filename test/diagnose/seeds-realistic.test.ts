// The seed documents' failures in the form users paste them (issue 12, "Done when"): the seed's fix
// comes first. Real issue texts in test/fixtures/seeds (sources in its README).
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');

async function best(file: string) {
  const { stdout } = await run(process.execPath, [BIN, 'diagnose', '--json', resolve(import.meta.dirname, '../fixtures/seeds', file)]);
  return JSON.parse(stdout).diagnoses[0] as { category: string; rule: string; fixes: { summary: string; changes: Record<string, unknown> }[] } | undefined;
}

describe('seeds in realistic form', () => {
  it('003: `losstensorMean += losstensor` and an OOM at the end of the first epoch: .item() first, not a smaller batch', async () => {
    const d = await best('003-chexnet-12-loss-accumulated-tensor.log');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/\.item\(\)/);
    expect(d?.fixes.some((f) => typeof f.changes.batch === 'number')).toBe(false);
  });
});
