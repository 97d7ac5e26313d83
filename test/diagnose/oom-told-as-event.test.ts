// Principle (issue 23, recognition): a report may quote the error's own words as what the run printed, in a body
// sentence and with no memory named ("提示out of memory", "报错 CUDA out of memory", "it throws out of memory"): that is
// the failure told, weaker than a message but enough where the paste holds none (a traceback cut before its message).
// Negated, hedged or avoided it tells nothing, as any told clause. The real DSB2017 report (eval9 4202, a test loop's
// traceback cut before its message) beside synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('the card said unable to hold it (撑不住 / 扛不住 / 装不下 / 放不下) is a failure told', () => {
  it('real: TANGO eval.py "显存撑不住" (zh, eval9 4217)', async () => {
    const d = await firstOfCase('eval9', '4217');
    expect(d?.category).toBe('cuda_oom');
  });
  it.each([['推理问题\n输入一长，显存就扛不住了'], ['关于测试\n模型太大，显存装不下'], ['评估的问题\n验证集的图片太大，显存放不下']])(
    '%j is a GPU out-of-memory report (synthetic)',
    async (text) => {
      expect((await diagnosePaste(text))?.category).toBe('cuda_oom');
    },
  );
  it('negated it tells nothing (synthetic)', async () => {
    expect(await diagnosePaste('配置说明\n这样设置之后显存不会撑不住')).toBeUndefined();
  });
});

describe('the error quoted as an event in a body sentence tells the failure', () => {
  it("real: DSB2017 test() OOM, the message only in the report's words (zh, eval9 4202)", async () => {
    const d = await firstOfCase('eval9', '4202');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0].summary).toMatch(/no_grad|inference_mode/);
  });

  // Synthetic: a title line first, the event told in the body.
  it.each([
    ['关于验证的问题\n训练正常，但是验证的时候报错out of memory'],
    ['Question about test.py\nWhen I run the test script it throws CUDA out of memory.'],
    ['测试脚本的问题\n运行测试时出现了OOM，训练没有问题'],
    ['eval problem\nRunning evaluation I got an OOM after a few batches.'],
  ])('%j is a GPU out-of-memory report', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('cuda_oom');
  });

  it.each([
    ['配置问题\n如果提示out of memory，应该调哪个参数'],
    ['配置问题\n为了避免出现out of memory，我设置了这些参数'],
    ['Config question\nI set these flags to avoid out of memory on small cards.'],
  ])('%j tells no failure', async (text) => {
    const d = await diagnosePaste(text);
    expect(d).toBeUndefined();
  });
});
