// A GPU the installed PyTorch build has no kernels for is a build problem, not memory and not the driver's
// initialisation (issue 12: reason from what the log says). Real logs, rule examples (sources inside).
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseOutput } from './corpus-case.js';

const root = resolve(import.meta.dirname, '../..');

async function best(rel: string) {
  const stdout = await diagnoseOutput(['--json', resolve(root, rel)]);
  return JSON.parse(stdout).diagnoses[0] as { rule: string; category: string; fixes: { summary: string; changes: Record<string, unknown> }[] };
}

describe('GPU architecture not in the PyTorch build', () => {
  for (const f of ['knowledge/cuda-arch-unsupported/match/featdepth-68-sm86.log', 'knowledge/cuda-arch-unsupported/match/yolox-314-no-kernel-image.log']) {
    it(`${f.split('/').pop()}: a build for the card's sm_XX is the fix, nothing about memory`, async () => {
      const d = await best(f);
      expect(d.rule).toBe('cuda-arch-unsupported');
      expect(d.category).toBe('driver_or_smi');
      expect(d.fixes[0].summary).toMatch(/get_arch_list/);
      // The lever named plainly, as a user acts on it: a newer PyTorch build, not a memory or driver setting.
      expect(d.fixes[0].summary).toMatch(/^Upgrade PyTorch to a build compiled for this GPU/);
      expect(d.fixes.every((x) => Object.keys(x.changes).length === 0)).toBe(true);
    });
  }

  it('a CUDA unknown error (cudaGetDeviceCount) is still the initialisation rule, its own advice first', async () => {
    const d = await best('knowledge/cuda-init-failed/match/cog-svd-11-cuda-unknown-error.log');
    expect(d.rule).toBe('cuda-init-failed');
    expect(d.fixes[0].summary).not.toMatch(/busy or unavailable/);
  });
});
