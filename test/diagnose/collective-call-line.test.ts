// Issue 23, the phase from frames: a traceback cut just below its last frame (as excerpts often are) still shows the
// source line that frame was running; where that line calls a torch.distributed collective by its API name
// (init_process_group, barrier, all_reduce, ...), the failure is in the collective, not in an outer function whose name
// says "test" or "train". Real example: blind10 6289 (public thread, URL in its cases.json); the other texts are
// synthetic variants written from the principle. In process (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const OOM =
  'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 0 bytes already allocated; 8.56 MiB free; 0 bytes reserved in total by PyTorch)';
const cut = (lastCode: string, outer = 'run_test') =>
  `${OOM}\nTraceback (most recent call last):\n  File "main.py", line 30, in ${outer}\n    launch(cfg)\n  File "/opt/lib/launcher.py", line 88, in setup_ranks\n    ${lastCode}\n`;

describe('a cut traceback whose last frame calls a collective is the collective phase', () => {
  it('real blind10/6289: Lightning DDP init cut at torch_distrib.init_process_group(: the collective, the other job on the card', async () => {
    const d = await firstOfCase('blind10', '6289');
    expect(d?.facts.phase).toBe('collective');
    expect(d?.fixes[0]?.summary).toMatch(/CUDA_VISIBLE_DEVICES/);
  });
  for (const code of ['torch.distributed.init_process_group(backend="nccl")', 'dist.barrier()', 'dist.all_reduce(t)', 'torch_distrib.broadcast(x, 0)'])
    it(`synthetic: last frame runs ${code}`, async () => {
      expect((await diagnosePaste(cut(code)))?.facts.phase).toBe('collective');
    });
  it('synthetic: last frame runs a forward call: not the collective', async () => {
    expect((await diagnosePaste(cut('out = model(batch)')))?.facts.phase).not.toBe('collective');
  });
});
