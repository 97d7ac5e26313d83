// Who holds the GPU memory (issue 12): decided from the OOM message's numbers, shown in facts and the
// reply, and deciding the first fix. Real logs from the dev set, the held-out set and rule examples,
// run through the CLI's own entry in this process (`gpu-doctor diagnose [--json]`, corpus-case.ts).
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseOutput } from './corpus-case.js';

const root = resolve(import.meta.dirname, '../..');

interface Fix {
  kind: string;
  summary: string;
  changes: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Out {
  diagnoses: { rule: string; category: string; facts: Record<string, any>; fixes: Fix[] }[];
}
async function diagnoseFile(rel: string, text = false): Promise<Out & { text: string }> {
  const stdout = await diagnoseOutput(text ? [resolve(root, rel)] : ['--json', resolve(root, rel)]);
  return text ? { diagnoses: [], text: stdout } : { ...(JSON.parse(stdout) as Out), text: '' };
}
const batchChanges = (fixes: Fix[]) => fixes.filter((f) => typeof f.changes.batch === 'number');

describe('who holds the memory decides the first fix', () => {
  it('other processes: 12.40 of 23.54 GiB reserved here, 572 MiB free, so ~10.6 GiB is held elsewhere (CARLA on the same GPU)', async () => {
    const {
      diagnoses: [d],
    } = await diagnoseFile('test/fixtures/eval-dev/073-cuda_oom.log');
    expect(d.facts.holder).toBe('other_processes');
    // 23.54 GiB − 572.5 MiB free − 12.40 GiB reserved, in GiB with two decimals
    const elsewhere = ((23.54 * 1024 - 572.5 - 12.4 * 1024) / 1024).toFixed(2);
    expect(d.facts.holderWhy).toContain(`${elsewhere} GiB`);
    expect(d.fixes[0].summary).toMatch(/^Another process holds GPU memory/);
    expect(batchChanges(d.fixes.slice(0, 1))).toEqual([]);
  });

  it('named other process: pid 43872 holds 4.97 GiB of the L4 and is the lever; the failing process is not listed as "other"', async () => {
    const {
      diagnoses: [d],
    } = await diagnoseFile('test/fixtures/eval-extra/019-cuda_oom.log');
    expect(d.facts.holder).toBe('other_processes');
    expect(d.facts.otherProcesses.map((p: { pid: number }) => p.pid)).toEqual([43872]);
    expect(d.facts.holderWhy).toContain('pid 43872');
    expect(d.fixes[0].summary).toMatch(/^Another process holds GPU memory/);
  });

  it('allocator cache: reserved 19.69 − allocated 12.04 GiB idle covers the 2.93 GiB request: expandable_segments first', async () => {
    const {
      diagnoses: [d],
    } = await diagnoseFile('test/fixtures/eval-dev/007-fragmentation.log');
    expect(d.category).toBe('fragmentation');
    expect(d.facts.holder).toBe('allocator_cache');
    expect(d.fixes[0].env).toEqual({ PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' });
  });

  it('a few MiB of idle cache on a full card is a full card: yolov5l at batch 16 gets batch 16 -> 8 first', async () => {
    const {
      diagnoses: [d],
    } = await diagnoseFile('test/fixtures/eval-dev/003-cuda_oom.log');
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.holder).toBe('activations');
    expect(d.fixes[0].changes.batch).toBe(8);
  });

  it('weights: an OOM inside module._apply/convert (moving the model to the GPU) is not a batch problem', async () => {
    const {
      diagnoses: [d],
    } = await diagnoseFile('test/fixtures/eval-extra/003-cuda_oom.log');
    expect(d.facts.oomPhase).toBe('load');
    expect(d.facts.holder).toBe('weights');
    expect(d.fixes[0].summary).toMatch(/quantized/);
    expect(batchChanges(d.fixes)).toEqual([]);
    expect(d.fixes.map((f) => f.summary).join(' ')).not.toMatch(/Halve the batch|mixed precision/);
  });

  it('PyTorch 1.0-1.3 "X cached" is the idle cache (amount_cached - amount_allocated), not the total: yolact #296 counts 3.63 GiB + 80.22 MiB as its own', async () => {
    const { diagnoses } = await diagnoseFile('knowledge/cuda-oom/match/yolact-issue-296-resume.log');
    const f = diagnoses[0].facts;
    expect(f.cachedMiB).toBeCloseTo(80.22, 1);
    expect(f.reservedUnallocatedMiB).toBeCloseTo(80.22, 1);
    // Held elsewhere: 5.80 GiB - 16.81 MiB free - (3.63 GiB + 80.22 MiB) of its own.
    const elsewhere = 5.8 * 1024 - 16.81 - (3.63 * 1024 + 80.22);
    expect(diagnoses[0].fixes[0].summary).toContain(`about ${(elsewhere / 1024).toFixed(2)} GiB of GPU 0's 5.80 GiB is held outside`);
  });

  it('the text reply states who holds the memory and why', async () => {
    const { text } = await diagnoseFile('test/fixtures/eval-dev/046-cuda_oom.log', true);
    expect(text).toMatch(/Who holds the memory:\nOther processes: of 14\.56 GiB, this process holds 1\.01 GiB/);
  });
});

// Pastes that cut the traceback's frames and keep only the source line above the message: that line
// still says what ran (Adam's state update, Module.to's convert).
describe('the source line above the OOM message gives the phase when the frames are cut', () => {
  it("Adam's exp_avg_sq line above the message: the optimizer state holds the card, not the batch (LLaMA-Factory, batch already 1)", async () => {
    const out = await diagnoseFile('test/fixtures/untuned/llm/310-cuda_oom.log');
    const d = out.diagnoses[0];
    expect(d.facts.holder).toBe('optimizer_state');
    expect(d.fixes[0].summary).toMatch(/optimizer state does not fit/);
    expect(d.fixes[0].changes.batch).toBeUndefined();
  });

  it("Module.to's `t.to(device, dtype if t.is_floating_point() ...)` above the message: the weights do not fit a 2 GiB card", async () => {
    const out = await diagnoseFile('test/fixtures/untuned/llm/314-cuda_oom.log');
    const d = out.diagnoses[0];
    expect(d.facts.holder).toBe('weights');
    expect(batchChanges(d.fixes.slice(0, 1))).toHaveLength(0);
  });
});

describe('every OOM reply states who holds the memory and why', () => {
  it('a real OOM without figures or telling frames (Caffe2 "error == cudaSuccess. 2 vs 0"): says it is not stated and how to find out, and does not claim the batch holds it', async () => {
    const { text } = await diagnoseFile('test/fixtures/eval-extra/007-cuda_oom.log', true);
    expect(text).toMatch(/Who holds the memory:\nNot stated: the log gives no memory figures/);
    expect(text).not.toMatch(/This process's own tensors fill the card/);
    expect(text).toMatch(/does not say who holds the memory/);
  });

  it("every GPU-memory diagnosis of the real logs in the repo carries the holder's why, and the text reply shows it", async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { diagnose } = await import('../../src/diagnose/diagnose.js');
    const { diagnosisReply } = await import('../../src/diagnose/reply.js');
    const { loadRuleBase } = await import('../../src/diagnose/rule-base.js');
    const base = await loadRuleBase();
    const dirs = [
      'test/fixtures/eval-dev',
      'test/fixtures/eval-extra',
      'test/fixtures/untuned/llm',
      'knowledge/cuda-oom/match',
      'knowledge/cuda-oom-fragmentation/match',
      'knowledge/dataparallel-replica-oom/match',
    ];
    let checked = 0;
    for (const dir of dirs) {
      for (const file of readdirSync(resolve(root, dir)).filter((f) => f.endsWith('.log'))) {
        const result = diagnose(readFileSync(resolve(root, dir, file), 'utf8'), base);
        const best = result.diagnoses[0];
        if (!best || !['cuda_oom', 'fragmentation', 'replica_oom'].includes(best.category)) continue;
        checked++;
        expect(best.incident.holder.why, `${dir}/${file}`).toBeTruthy();
        const reply = JSON.stringify(diagnosisReply(result));
        expect(reply, `${dir}/${file}`).toContain('Who holds the memory');
      }
    }
    expect(checked).toBeGreaterThan(80);
  });
});

describe('the failing process is not among the "other" processes', () => {
  it('four processes listed and no "this process has" line: the one holding what this allocator reserved plus a context (pid 19066) is this process', async () => {
    const out = await diagnoseFile('test/fixtures/untuned/llm/301-fragmentation.log');
    const pids = (out.diagnoses[0].facts.otherProcesses as { pid: number }[]).map((p) => p.pid);
    expect(pids).toEqual([19069, 19060, 19063]);
  });
});

describe('an idle cache that is ordinary slack is not fragmentation', () => {
  it('287 MiB idle on a 4 GiB card (Pose2Seg, 128 MiB request): under half a GiB, so the activations, and the batch comes first', async () => {
    const [d] = (await diagnoseFile('test/fixtures/untuned/sealed/900-cuda_oom.log')).diagnoses;
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.holder).not.toBe('allocator_cache');
    expect(batchChanges(d.fixes.slice(0, 1)).length + (/batch/i.test(d.fixes[0].summary) ? 1 : 0)).toBeGreaterThan(0);
  });
  it('551 MiB "cached" against a 512 MiB request (PyTorch 1.x, GTX 1070): a cache that only just covers the request is not fragmentation', async () => {
    const [d] = (await diagnoseFile('test/fixtures/untuned/sealed/901-cuda_oom.log')).diagnoses;
    expect(d.facts.holder).not.toBe('allocator_cache');
    expect(d.fixes[0].env?.PYTORCH_CUDA_ALLOC_CONF).toBeUndefined();
  });
  it('a GiB-scale cache just over the request stays fragmentation (9.46 − 8.53 GiB idle vs 314 MiB; 7.6 GiB vs 7 GiB)', async () => {
    for (const f of ['test/fixtures/untuned/vision/116-fragmentation.log', 'test/fixtures/untuned/vision/119-fragmentation.log']) {
      const [d] = (await diagnoseFile(f)).diagnoses;
      expect(d.facts.holder, f).toBe('allocator_cache');
    }
  });
});
