// Issue 23, routes by evidence: DeepSpeed's launcher prints its sigkill_handler lines ("Killing subprocess N") for any
// rank that exits non-zero; only "return code = -9" with no error says the host killed it. Where the report tells the
// GPU's memory ran out ("显存不够", "CUDA out of memory"), the rank died of a CUDA OOM, and a full fine-tune's static part
// is then judged by the budget. Real example: blind7 3915 (public thread, URL in its cases.json); the other texts are
// synthetic variants written from the principle. In process (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const KILL = `[2024-01-01 10:00:00,000] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 4242
[2024-01-01 10:00:00,001] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank=0', '--deepspeed', 'zero3.json']`;

describe("the launcher's kill lines beside a GPU memory report are a CUDA OOM", () => {
  it('real blind7/3915: 显存不够 in the title over the launcher lines: cuda_oom, the static part, not host RAM', async () => {
    const d = await firstOfCase('blind7', '3915');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toMatch(/ZeRO|offload|LoRA/);
  });
  it.each([
    ['Chinese title', `全参训练显存不足\n${KILL}`],
    ['English sentence', `Training 13B with deepspeed, I get CUDA out of memory on every rank\n${KILL}`],
  ])('synthetic: %s', async (_name, text) => {
    expect((await diagnosePaste(text))?.category).toBe('cuda_oom');
  });
  it('synthetic control: the kill lines with return code -9 and no GPU words stay a host kill', async () => {
    const d = await diagnosePaste(`${KILL}\n[2024-01-01 10:00:00,002] [ERROR] [launch.py:321:sigkill_handler] exits with return code = -9`);
    expect(d?.category).toBe('host_oom_killed');
  });
});
