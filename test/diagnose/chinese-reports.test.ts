// Chinese-language reports (issue 12, item 7: the seed documents' authors and many users write Chinese):
// "爆显存" / "显存不足" / "显卡内存爆掉" in prose, with the batch stated the Chinese way ("batch_size为4",
// "batchsize改小为4", "我看batch-size=2"), are a CUDA OOM whose batch is read and halved. Real issue
// texts kept as the cuda-oom rule's match examples (sources in their first line).
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseOutput } from './corpus-case.js';

const dir = resolve(import.meta.dirname, '../../knowledge/cuda-oom/match');

async function best(file: string) {
  const stdout = await diagnoseOutput(['--json', resolve(dir, file)]);
  return JSON.parse(stdout).diagnoses[0] as { category: string; facts: Record<string, unknown>; fixes: { changes: Record<string, unknown> }[] };
}

describe('Chinese-language OOM reports', () => {
  for (const [file, batch] of [
    ['irra-43-batch4-zh.log', 4],
    ['transbts-14-batchsize-4-zh.log', 4],
    ['paddledetection-3949-batch2-zh.log', 2],
  ] as const) {
    it(`${file}: a CUDA OOM at batch ${batch}, halved`, async () => {
      const d = await best(file);
      expect(d.category).toBe('cuda_oom');
      expect(d.facts.batch).toBe(batch);
      expect(d.fixes[0].changes.batch).toBe(batch / 2);
    });
  }
});
