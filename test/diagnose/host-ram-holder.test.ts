// Who holds host RAM when the kernel kills a run (issue 12, item 1): a DataLoader job's workers, or every
// launched process's own copy of a large model's weights, or DeepSpeed's CPU offload at optimizer init.
// Real logs from rule examples and the tuned corpus, through the CLI (`gpu-doctor diagnose --json`).
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseOutput } from './corpus-case.js';

const root = resolve(import.meta.dirname, '../..');

interface Out {
  diagnoses: { rule: string; category: string; facts: Record<string, unknown>; fixes: { summary: string; changes: Record<string, unknown> }[] }[];
}
async function first(rel: string) {
  const stdout = await diagnoseOutput(['--json', resolve(root, rel)]);
  const d = (JSON.parse(stdout) as Out).diagnoses[0];
  return { rule: d?.rule, category: d?.category, first: d?.fixes[0]?.summary ?? '', fixes: d?.fixes ?? [] };
}

describe('host RAM: who holds it decides the first fix', () => {
  it('DeepSpeed killed a rank at "Before initializing optimizer states" with no Python error: CPU offload of the optimizer, NVMe first', async () => {
    const d = await first('knowledge/deepspeed-launcher-killed/match/deepspeed-3160-optimizer-init.log');
    expect(d.category).toBe('host_oom_killed');
    expect(d.rule).toBe('deepspeed-launcher-killed');
    expect(d.first).toMatch(/offload_optimizer\.device: nvme/);
    expect(d.first).toMatch(/pin_memory: false/);
  });

  it('DeepSpeed killed a rank elsewhere: each rank builds the whole model in CPU RAM first, so zero.Init / low_cpu_mem_usage', async () => {
    const d = await first('knowledge/deepspeed-launcher-killed/match/deepspeed-4571-killing-subprocess.log');
    expect(d.rule).toBe('deepspeed-launcher-killed');
    expect(d.first).toMatch(/deepspeed\.zero\.Init/);
    expect(d.first).not.toMatch(/initializing optimizer states/);
  });

  it('a launcher that lost a rank after a Python traceback is not a host kill (the exception is the cause)', async () => {
    for (const f of [
      'knowledge/deepspeed-launcher-killed/no-match/nccl-watchdog-then-killing-subprocess.log',
      'knowledge/deepspeed-launcher-killed/no-match/cuda-oom-then-return-code-1.log',
    ]) {
      const d = await first(f);
      expect(d.rule).not.toBe('deepspeed-launcher-killed');
      expect(d.category).not.toBe('host_oom_killed');
    }
  });

  it('torchrun exitcode -9 while llama-2-7b loads, no DataLoader workers set: the weights per process, not the workers', async () => {
    const d = await first('test/fixtures/untuned/llm/306-host_oom_killed.log');
    expect(d.category).toBe('host_oom_killed');
    expect(d.first).toMatch(/7B-parameter model/);
    expect(d.first).toMatch(/low_cpu_mem_usage=True/);
    expect(d.first).not.toMatch(/DataLoader workers:/);
  });

  it('a "Killed" training run with its workers in the log still gets fewer workers first (seed 002: workers=8 on Colab)', async () => {
    const d = await first('test/fixtures/eval-dev/064-host_oom_killed.log');
    expect(d.category).toBe('host_oom_killed');
    expect(d.fixes[0].changes.workers).toBe(2);
    expect(d.first).not.toMatch(/weights/);
  });
});
