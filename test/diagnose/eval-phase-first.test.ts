// The evaluation phase first (issue 23, eval8): an OOM that training survived and the evaluation did not gets the
// evaluation's lever (no_grad, eval_accumulation_steps, the evaluation input), never the training batch. Principles, each
// with the real threads of test/fixtures/untuned/eval8 and synthetic variants written from the principle (marked
// synthetic), diagnosed through the CLI's own entry in process (corpus-case.ts):
// - The contrast places the failure: training said to work and the evaluation said to fail, in any two lines ("train is
//   ok. / test is error.", "the train code, It is ok ... run the test code, but get the error", "训练正常……验证报错").
// - "Inference" in English prose is not read as the evaluation here (a served model's and a generation's word too: read
//   alone it tipped a blind-split case to no_grad); 推理时 in zh, a named function or the contrast with training are.
// - The failing function named in prose, its name's words an evaluation's ("for the epochVal method", "in my
//   validate_model function"); pytest's test_x names are not.
// - Gradients said to be on in more forms ("there is no torch.no_grad()", "没有类似 test.py 之中的 with torch.no_grad()"),
//   and PyTorch's own "volatile was removed and now has no effect" warning (which quotes no_grad, but is no code under it).
// - Ultralytics' validation table header places the failure in evaluation; that validation runs under no_grad at twice
//   the training batch, so the training batch it follows (or val=False / --noval) is the lever, not no_grad.
// - "predict" in a report's first line is the phase that failed ("OOM when predicting on the test set"), unless it
//   forecasts the OOM or the memory ("Predict OOM before launching", "OOM prediction"): knowledge/oom-reported-in-words.
// - "SFT" (TRL's SFTTrainer stage, LLaMA-Factory / ms-swift), TrainingArguments' setting names (do_eval,
//   load_best_model_at_end ...) and transformers' example scripts (run_summarization.py ...; not the _no_trainer twins)
//   name the HF Trainer family: eval_accumulation_steps first.
// - In an evaluation that keeps every forward's graph, a small idle cache (under a tenth of the card) is the graphs'
//   churn, not fragmentation: no_grad first, not expandable_segments.
// - One large input stated for the evaluation (WxH, or a shape tuple "the dimension (1025, 2049)") at batch 1 or 2 or
//   none: the input's size first (tiles, sliding window, a smaller test size), not no_grad.
// - A framework whose evaluation already runs without gradients (PaddlePaddle by its own OOM message or package names,
//   OpenMMLab by its packages and config words such as samples_per_gpu): no_grad is no lever; the evaluation input's
//   size is, unless an evaluation batch above 1 is stated.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const noTrainingBatch = (d: CaseDiagnosis | undefined) => {
  expect(d?.fixes[0]?.changes?.batch, 'the first fix does not change the training batch').toBeUndefined();
  expect(first(d)).not.toMatch(/^Reduce the batch/);
};
const OOM_LINE =
  'RuntimeError: CUDA out of memory. Tried to allocate 38.00 MiB (GPU 0; 10.76 GiB total capacity; 8.95 GiB already allocated; 17.06 MiB free; 9.61 GiB reserved in total by PyTorch)';

describe('training said to work, the evaluation said to fail (levers/reported-phase.ts)', () => {
  it('real: "train is ok. / test is error." (eval8/3400) is evaluation without no_grad, not a fragmented cache', async () => {
    const d = await firstOfCase('eval8', '3400');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/inference_mode|no_grad/);
    expect(first(d)).not.toMatch(/expandable_segments/);
    noTrainingBatch(d);
  });
  it('real: "I just run the test code, but get the error ... the train code, It is ok" (eval8/3413): evaluation, not the training batch', async () => {
    const d = await firstOfCase('eval8', '3413');
    expect(d?.facts.phase).toBe('eval');
    noTrainingBatch(d);
  });
  it.each([
    ['en, two short lines', `Training works fine.\nValidation is error, see below\n${OOM_LINE}\n`],
    ['en, the test script', `I run the test script and get an error.\nThe training runs well on the same card.\n${OOM_LINE}\n`],
    ['zh, 训练正常 / 测试报错', `训练正常\n测试的时候报错了\n${OOM_LINE}\n`],
    ['zh, 推理 fails', `训练过程一切正常，推理就爆显存\n${OOM_LINE}\n`],
  ])('synthetic (%s): evaluation, no_grad first', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/inference_mode|no_grad/);
    noTrainingBatch(d);
  });
  it.each([
    ['synthetic: a unit test fails, no training said to work', `test is error in CI\n${OOM_LINE}\n`],
    ['synthetic: training fails, the evaluation is fine', `Training is out of memory; evaluation works fine.\n${OOM_LINE}\n`],
  ])('%s: not placed in evaluation', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.facts.phase).not.toBe('eval');
  });
});

describe('the failing function named in prose', () => {
  it('real: "for the epochVal method. Have tried editing batch size" (eval8/3418) gets no_grad, not the batch', async () => {
    const d = await firstOfCase('eval8', '3418');
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/inference_mode|no_grad/);
    noTrainingBatch(d);
  });
  it.each([
    ['en, the validate_model function', `${OOM_LINE}\nThis happens in my validate_model function after each epoch.\n`],
    ['en, camelCase runValidation()', `${OOM_LINE}\nIt fails when calling runValidation() at the end of the epoch.\n`],
    ['en, a test function', `${OOM_LINE}\nThe error comes from the model_test function.\n`],
  ])('synthetic (%s): evaluation', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/inference_mode|no_grad/);
  });
  it.each([
    ['pytest naming', `${OOM_LINE}\nIt fails in the test_forward_backward function of our suite.\n`],
    ['a training function', `${OOM_LINE}\nIt fails in the train_one_epoch function.\n`],
    ['model.eval() in code is no function named in prose', `model.eval()\nout = model(x)\n${OOM_LINE}\n`],
  ])('synthetic (%s): not evaluation by name', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.facts.phase).not.toBe('eval');
  });
});

describe('gradients said to be on', () => {
  it('real: a test loop pasted with "没有类似test.py之中的with torch.no_grad()" (eval8/3404) gets no_grad', async () => {
    const d = await firstOfCase('eval8', '3404');
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/inference_mode|no_grad/);
    expect(first(d)).not.toMatch(/paste shows evaluation code under/);
  });
  it("real: PyTorch's 'volatile was removed and now has no effect' warning above test()'s OOM (eval8/3419) gets no_grad", async () => {
    const d = await firstOfCase('eval8', '3419');
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/inference_mode|no_grad/);
    expect(first(d)).not.toMatch(/paste shows evaluation code under/);
  });
  it.each([
    ['en, there is no torch.no_grad()', `${OOM_LINE}\nThere is no torch.no_grad() around the prediction code.\n`],
    ['en, forgot to add', `${OOM_LINE}\nI think I forgot to add with torch.no_grad() in the loop.\n`],
    ['zh, 忘了加', `${OOM_LINE}\n好像忘了加 with torch.no_grad():\n`],
    [
      'en, the volatile warning alone',
      `demo.py:40: UserWarning: volatile was removed and now has no effect. Use \`with torch.no_grad():\` instead.\n  x = Variable(x, volatile=True)\n${OOM_LINE}\n`,
    ],
  ])('synthetic (%s): a forward with gradients on, no_grad first', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/inference_mode|no_grad/);
    expect(first(d)).not.toMatch(/paste shows evaluation code under/);
  });
  it('synthetic: code shown under torch.no_grad() still counts as shown', async () => {
    const full = OOM_LINE.replace('9.61 GiB reserved', '9.00 GiB reserved');
    const d = await diagnosePaste(`Validation runs out of memory\nwith torch.no_grad():\n    out = model(x)\n${full}\n`);
    expect(first(d)).toMatch(/paste shows evaluation code under/);
  });
});

describe('SFT, HF Trainer settings and example scripts name the HF Trainer family', () => {
  it('real: "sft训练时跑验证集会额外占用10GB显存" (eval8/3415) gets eval_accumulation_steps', async () => {
    const d = await firstOfCase('eval8', '3415');
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/eval_accumulation_steps/);
    noTrainingBatch(d);
  });
  it.each([
    ['en', 'Qwen2 SFT: CUDA out of memory during evaluation\nTraining is fine, every eval step dies.\n'],
    ['zh', 'llama3 sft 验证时显存不足\n训练正常，一到 eval 就 OOM\n'],
    ['en, run_summarization.py with --do_eval', 'OOM during evaluation\npython run_summarization.py --model_name_or_path t5-base --do_train --do_eval\n'],
    ['en, load_best_model_at_end in a config', 'Evaluation runs out of memory\nload_best_model_at_end: true\nmetric_for_best_model: accuracy\n'],
  ])('synthetic (%s): eval_accumulation_steps first', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/eval_accumulation_steps/);
  });
  it("synthetic: the accelerate example's run_glue_no_trainer.py runs its own loop, not the Trainer's", async () => {
    const d = await diagnosePaste('OOM during evaluation\naccelerate launch run_glue_no_trainer.py --model_name_or_path bert-base-cased --do_eval\n');
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).not.toMatch(/eval_accumulation_steps/);
  });
});

describe('predict in a first line is the phase, not a forecast (knowledge/oom-reported-in-words)', () => {
  it.each([
    ['en, predicting on the test set', 'OOM when predicting on the test set\nmodel.predict(x) with keras\n'],
    ['en, prediction fails', 'Out of memory during prediction with my fine-tuned model\nTraining was fine.\n'],
  ])('synthetic (%s): a memory failure, placed in evaluation', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.category).toBe('cuda_oom');
    expect(d?.facts.phase).toBe('eval');
  });
  it.each([
    ['predict OOM before launching', 'Predict OOM before launching a job\nIs there a tool that tells the memory a config needs?\n'],
    ['predicting the peak memory', 'Predicting the peak memory of a model to avoid out of memory errors\n'],
    ['an OOM predictor', 'OOM predictor for transformer configs\nWould be nice to have one.\n'],
  ])('synthetic (%s): no failure told', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.category).toBeUndefined();
  });
});

describe("Ultralytics' validation during training (synthetic: the tools' own log formats)", () => {
  const v8 = [
    'Ultralytics YOLOv8.0.230 🚀 Python-3.10.12 torch-2.1.0+cu121 CUDA:0 (Tesla T4, 15102MiB)',
    'engine/trainer: task=detect, mode=train, model=yolov8s.pt, data=data.yaml, epochs=100, batch=16, imgsz=640',
    '      1/100      7.12G      1.234      2.345      1.456         45        640: 100%|██████████| 300/300 [02:10<00:00,  2.30it/s]',
    '                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95):  12%|█▏        | 4/34 [00:03<00:25,  1.17it/s]',
    'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.20 GiB. GPU 0 has a total capacity of 14.75 GiB of which 512.00 MiB is free. Including non-PyTorch memory, this process has 14.24 GiB memory in use.',
  ].join('\n');
  const v5 = [
    'YOLOv5 🚀 v7.0-72 Python-3.8.10 torch-1.13.1+cu117 CUDA:0 (NVIDIA GeForce RTX 3060, 12050MiB)',
    'train: weights=yolov5s.pt, cfg=, data=data.yaml, epochs=300, batch_size=32, imgsz=640',
    '      0/299      9.8G    0.08    0.05    0.02    120    640: 100%|██████████| 500/500 [03:00<00:00]',
    '                 Class     Images     Labels          P          R     mAP@.5 mAP@.5:.95:  30%|███       | 30/100 [00:10<00:20]',
    'RuntimeError: CUDA out of memory. Tried to allocate 500.00 MiB (GPU 0; 11.77 GiB total capacity; 10.50 GiB already allocated; 200.00 MiB free; 10.90 GiB reserved in total by PyTorch)',
  ].join('\n');
  it.each([
    ['YOLOv8, the Instances header', v8],
    ['YOLOv5, the Labels header', v5],
  ])('%s: the validation at twice the training batch, not no_grad', async (_name, paste) => {
    const d = await diagnosePaste(paste + '\n');
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/twice the training batch/);
    expect(first(d)).toMatch(/val=False/);
    expect(d?.fixes[0]?.changes?.batch).toBeUndefined();
  });
  it('an epoch row after the header: training again, not the validation', async () => {
    const lines = v8.split('\n');
    const paste = [
      ...lines.slice(0, 4),
      '      2/100      7.30G      1.200      2.300      1.400         40        640:  10%|█         | 30/300 [00:12<01:50,  2.40it/s]',
      lines[4],
    ].join('\n');
    const d = await diagnosePaste(paste + '\n');
    expect(d?.facts.phase).not.toBe('eval');
  });
});
