// Issue 23, each phase has its own lever: a report that tells its OOM in words above a traceback excerpt cut before the
// error line (search indexes and issue templates cut them) still shows what ran in its innermost frames. The optimizer's
// step allocating its state is no batch's doing (shard / offload it, an 8-bit optimizer); a checkpoint read by
// torch.load (also transformers' load_sharded_checkpoint and the Trainer's best-model reload) lands on the GPU it was
// saved from (map_location="cpu"); a serving tool's load is placed by its own knobs. Real examples: blind7 3937, blind6
// 3834 and llm 406 (public threads, URLs in their cases.json); every other text is a synthetic variant written from the
// principle. In process (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';
const frame = (file: string, fn: string, code: string) => `  File "${file}", line 12, in ${fn}\n    ${code}`;

describe('a traceback cut before its error line still places the failure', () => {
  it('real blind7/3937: cut inside optimizer.step of a full fine-tune: the optimizer state, not the batch', async () => {
    const d = await firstOfCase('blind7', '3937');
    expect(d?.facts.phase).toBe('optimizer');
    expect(d?.fixes[0]?.changes).not.toHaveProperty('batch');
    expect(first(d)).toMatch(/ZeRO|8-bit|offload/);
  });
  it("real blind6/3834: cut at torch.load in the Trainer's best-model reload: map_location", async () => {
    const d = await firstOfCase('blind6', '3834');
    expect(d?.facts.phase).toBe('checkpoint');
    expect(first(d)).toMatch(/map_location/);
  });
  it("real llm/406: ComfyUI's message above the traceback of a node moving the model: its own knobs", async () => {
    expect(first(await firstOfCase('llm', '406'))).toMatch(/--lowvram/);
  });

  // synthetic: a told OOM over excerpts in each phase, with and without the "Traceback" head
  const told = 'Training crashes with CUDA out of memory, traceback below (cut):\n';
  it("synthetic: cut inside AdamW's step (with the head) and inside optimizer.step (frames only)", async () => {
    for (const tail of [
      `Traceback (most recent call last):\n${frame('train.py', '<module>', 'optimizer.step()')}\n${frame('/usr/lib/python3/site-packages/torch/optim/adamw.py', '_multi_tensor_adamw', 'exp_avg_sq = torch.zeros_like(p)')}`,
      `${frame('train.py', 'main', 'opt.step()')}\n${frame('/usr/lib/python3/site-packages/torch/optim/optimizer.py', 'step', 'out = func(*args, **kwargs)')}`,
    ]) {
      const d = await diagnosePaste(told + tail);
      expect(d?.facts.phase).toBe('optimizer');
      expect(d?.fixes[0]?.changes).not.toHaveProperty('batch');
    }
  });
  it('synthetic: cut at a torch.load line under any frame: the checkpoint', async () => {
    const d = await diagnosePaste(`${told}Traceback (most recent call last):\n${frame('resume.py', 'restore', 'state = torch.load(ckpt_path)')}`);
    expect(d?.facts.phase).toBe('checkpoint');
    expect(first(d)).toMatch(/map_location/);
  });
  it('synthetic control: an excerpt cut inside the forward keeps the forward', async () => {
    const d = await diagnosePaste(
      `${told}Traceback (most recent call last):\n${frame('train.py', 'train_one_epoch', 'out = model(x)')}\n${frame('/usr/lib/python3/site-packages/torch/nn/modules/module.py', '_call_impl', 'return forward_call(*args, **kwargs)')}`,
    );
    expect(d?.facts.phase).toBe('forward');
  });
});
