// Principle (issue 23, eval class): a climb of GPU memory told through one evaluation, test or prediction pass over a set
// that ends in an out-of-memory error is an OOM of what the pass keeps of every batch (predictions, logits, embeddings
// gathered on the GPU until the set ends): the verdict is the OOM's (cuda_oom) and its first fix moves each batch's
// outputs off the card (HF: eval_accumulation_steps), with no batch change. A climb through the pass that the report does
// not say ran out stays a growth; a climb during training is not the pass's; a clause that says training (or validation)
// is fine before "but" does not speak of the climb after it. Real logs from the read splits blind7 / blind9 and the tuned
// group eval10 beside synthetic variants written from the principle (each says so), in process.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';
import { readEvalPassGrowth } from '../../src/diagnose/levers/eval-over-set.js';

const PASS = /climbs through an inference or evaluation pass over the set/;
const summary = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
function passOom(d: CaseDiagnosis | undefined) {
  expect(d?.category).toBe('cuda_oom');
  expect(summary(d)).toMatch(PASS);
  expect(summary(d)).toMatch(/per batch|each batch/);
  expect(d?.fixes[0]?.changes.batch).toBeUndefined();
}

describe('a climb through an evaluation pass that ends in an OOM', () => {
  it('blind9/5723 (real): "during both training and validation, but during testing, ... gradually increases until an out-of-memory (OOM) error occurs"', async () => {
    passOom(await firstOfCase('blind9', '5723'));
  });
  it('blind7/3912 (real): a climb on the test set that ends in "a CUDA out-of-memory issue"', async () => {
    const d = await firstOfCase('blind7', '3912');
    passOom(d);
    expect(summary(d)).toMatch(/eval_accumulation_steps/);
  });
  it('synthetic: the climb and the OOM told in English, with the pass named in several ways', async () => {
    passOom(await diagnosePaste('During testing the GPU memory gradually increases batch by batch until CUDA out of memory.'));
    passOom(await diagnosePaste('Training is fine. However, during prediction GPU memory keeps growing and the run dies with OOM.'));
    passOom(await diagnosePaste('GPU memory keeps increasing over the validation set until CUDA out of memory'));
  });
  it('synthetic: the same in Chinese (测试时 / 预测时 / 验证集)', async () => {
    passOom(await diagnosePaste('训练正常，但是测试时显存一直增长，最后显存不足报错'));
    passOom(await diagnosePaste('预测时显存逐渐递增，最终爆显存'));
  });
  it('synthetic: a framework message gives the OOM, the report gives the climb', async () => {
    passOom(
      await diagnosePaste(
        'When evaluating on the test set, GPU memory keeps growing after each batch.\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 9.80 GiB already allocated; 12.00 MiB free; 9.90 GiB reserved in total by PyTorch)',
      ),
    );
  });
});

describe('the pass named in the title, the climb in the body; wider growth words (eval13, first-run misses)', () => {
  it('eval13/7054 (real): "CUDA out of memory(test_DREAM.py)" titled, "memory usage continue to increase" in the body', async () => {
    passOom(await firstOfCase('eval13', '7054'));
  });
  it('eval13/7050, 7051, 7053 (real): "after beginning testing", "continue increase while testing", "use the test script"', async () => {
    for (const n of ['7050', '7051', '7053']) expect((await firstOfCase('eval13', n))?.category).toBe('cuda_oom');
  });
  it('synthetic: a title that names the evaluation script or the test pass, the climb and the OOM below it', async () => {
    passOom(await diagnosePaste('OOM in eval_retrieval.py\n\nThe GPU memory keeps increasing until it runs out of memory.'));
    passOom(await diagnosePaste('Memory problem while testing\n\nGPU memory continues to grow and finally CUDA out of memory.'));
    expect(readEvalPassGrowth('Running the test script\nthe GPU memory continued increasing')).toMatch(/continued increasing/);
  });
  it('synthetic control: a title about training does not make a body climb the pass', () => {
    expect(readEvalPassGrowth('OOM while training with train.py\n\nThe GPU memory keeps increasing.')).toBeUndefined();
  });
});

describe('near misses: the climb stays a growth, or is not the pass', () => {
  it('eval13/7055 (real): "will increase in the testing phase during training", no OOM: a growth', async () => {
    expect((await firstOfCase('eval13', '7055'))?.category).toBe('growing_memory_leak');
  });
  it('eval13/7056 (real): system memory climbing through testing until "Killed": host RAM, not the card', async () => {
    expect((await firstOfCase('eval13', '7056'))?.category).toBe('host_oom_killed');
  });
  it('eval10/5106 (tuned, real): the climb through validation is told, no OOM: a growth', async () => {
    const d = await firstOfCase('eval10', '5106');
    expect(d?.category).toBe('growing_memory_leak');
    expect(summary(d)).toMatch(PASS);
  });
  it('synthetic: a climb through the test pass that the report says does not run out stays a growth', async () => {
    const d = await diagnosePaste('During testing the GPU memory keeps growing, but no OOM errors occur so far.');
    expect(d?.category).not.toBe('cuda_oom');
  });
  it('synthetic: a climb during training that ends in OOM is not the pass', async () => {
    const d = await diagnosePaste('GPU memory keeps increasing during training until CUDA out of memory');
    expect(summary(d)).not.toMatch(PASS);
  });
  it('synthetic: training named in the same clause as the climb is not the pass', () => {
    expect(readEvalPassGrowth('During training and testing the GPU memory keeps growing')).toBeUndefined();
    expect(readEvalPassGrowth('Training is fine, but during testing the GPU memory keeps growing')).toMatch(/testing/);
  });
});
