// Levers with preconditions, through the CLI (`gpu-doctor diagnose --json`, issue 23). Each principle
// has its real example (test/fixtures/phase-levers, sources in its README) and synthetic variants written
// from the principle: other models, numbers, frame orders and paste formats, with and without [rankN]:
// prefixes. Each asserts the category, the first fix's lever, and that halving the batch is not the first
// fix where the batch lever's preconditions fail (a training step, a known batch, no growth, a static part
// that fits the card).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diagnoseAll, diagnoseFile, type CaseDiagnosis } from './corpus-case.js';

const REAL = resolve(import.meta.dirname, '../fixtures/phase-levers');
const dir = mkdtempSync(join(tmpdir(), 'phase-levers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function diagnoseText(text: string): Promise<CaseDiagnosis> {
  const file = join(dir, `case-${n++}.log`);
  writeFileSync(file, text);
  const d = await diagnoseFile(file);
  expect(d, 'a diagnosis').toBeDefined();
  return d!;
}
const real = async (name: string) => (await diagnoseFile(join(REAL, name)))!;

const SITE = '/opt/conda/lib/python3.11/site-packages';
const frame = (file: string, fn: string, code = 'return f(*args, **kwargs)') => [`  File "${file}", line 118, in ${fn}`, `    ${code}`];
const tb = (frames: string[][], error: string, prefix = '') =>
  ['Traceback (most recent call last):', ...frames.flat(), error].map((l) => prefix + l).join('\n');
const oom = (tried: string, total: string, free: string, mine: string, alloc: string, idle: string) =>
  `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tried}. GPU 0 has a total capacity of ${total} of which ${free} is free. Including non-PyTorch memory, this process has ${mine} memory in use. Of the allocated memory ${alloc} is allocated by PyTorch, and ${idle} is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.`;
const FORWARD = [
  frame(`${SITE}/torch/nn/modules/module.py`, '_wrapped_call_impl'),
  frame(`${SITE}/torch/nn/modules/module.py`, '_call_impl'),
  frame(`${SITE}/transformers/models/llama/modeling_llama.py`, 'forward', 'attn_output = self.o_proj(attn_output)'),
];

const first = (d: CaseDiagnosis) => d.fixes[0];
/** The batch lever is not first: the first fix neither changes the batch nor tells to halve or reduce it. */
function expectBatchNotFirst(d: CaseDiagnosis): void {
  expect(first(d).changes.batch).toBeUndefined();
  expect(first(d).summary).not.toMatch(/^(?:Reduce|Halve) the batch/);
}

describe('evaluation: gathering predictions on the GPU -> eval_accumulation_steps', () => {
  const hfFrames = (model: string) => [
    frame('train.py', '<module>', 'main()'),
    frame(`${SITE}/transformers/trainer.py`, 'train'),
    frame(`${SITE}/transformers/trainer.py`, '_inner_training_loop'),
    frame(`${SITE}/transformers/trainer.py`, '_maybe_log_save_evaluate'),
    frame(`${SITE}/transformers/trainer.py`, 'evaluate'),
    frame(
      `${SITE}/transformers/trainer.py`,
      'evaluation_loop',
      'all_preds = logits if all_preds is None else nested_concat(all_preds, logits, padding_index=-100)',
    ),
    frame(`${SITE}/transformers/trainer_pt_utils.py`, 'nested_concat'),
    frame(`${SITE}/transformers/trainer_pt_utils.py`, 'torch_pad_and_concatenate', `return torch.cat((tensor1, tensor2), dim=0)  # ${model}`),
  ];
  it.each([
    ['real: huggingface/transformers#17089', () => real('hf-17089-eval-nested-concat.log')],
    [
      'torchrun, [rank0]: prefixes, a stated training batch of 16',
      () =>
        diagnoseText(
          'torchrun --nproc_per_node 2 train.py --model_name_or_path meta-llama/Llama-3.1-8B --per_device_train_batch_size 16 --do_eval\n' +
            tb(hfFrames('llama'), oom('3.91 GiB', '79.19 GiB', '1.50 GiB', '77.68 GiB', '75.02 GiB', '1.97 GiB'), '[rank0]: '),
        ),
    ],
    [
      'a notebook (IPython frames), a 24 GB card',
      () =>
        diagnoseText(
          [
            '---------------------------------------------------------------------------',
            'OutOfMemoryError                          Traceback (most recent call last)',
            'Cell In[12], line 1',
            '----> 1 trainer.evaluate()',
            `File ${SITE}/transformers/trainer.py:4051, in Trainer.evaluate(self, eval_dataset, ignore_keys, metric_key_prefix)`,
            `File ${SITE}/transformers/trainer.py:4279, in Trainer.evaluation_loop(self, dataloader, description, prediction_loss_only)`,
            `File ${SITE}/transformers/trainer_pt_utils.py:126, in nested_concat(tensors, new_tensors, padding_index)`,
            `File ${SITE}/transformers/trainer_pt_utils.py:84, in torch_pad_and_concatenate(tensor1, tensor2, padding_index)`,
            'OutOfMemoryError: CUDA out of memory. Tried to allocate 1.16 GiB. GPU 0 has a total capacity of 23.64 GiB of which 612.81 MiB is free. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 830.00 MiB is reserved by PyTorch but unallocated.',
          ].join('\n'),
        ),
    ],
  ])('%s', async (_name, run) => {
    const d = await run();
    expect(d.category).toBe('cuda_oom');
    expect(first(d).summary).toMatch(/eval_accumulation_steps/);
    expectBatchNotFirst(d);
    expect(d.fixes.every((f) => f.changes.batch === undefined)).toBe(true);
  });
});

describe("evaluation in a script's own loop -> torch.no_grad / inference_mode", () => {
  it.each([
    ['real: sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning#57', () => real('image-captioning-57-validate.log')],
    [
      'validate() with a stated batch of 64 and the allocator figures',
      () =>
        diagnoseText(
          'python train.py --batch-size 64 --epochs 30\n' +
            tb(
              [
                frame('train.py', '<module>', 'main()'),
                frame('train.py', 'main', 'val_loss = validate(model, val_loader)'),
                frame('train.py', 'validate', 'out = model(images)'),
                ...FORWARD,
              ],
              oom('512.00 MiB', '23.65 GiB', '301.06 MiB', '23.34 GiB', '22.71 GiB', '196.12 MiB'),
            ),
        ),
    ],
    [
      'evaluate() in eval.py under [rank1]: prefixes, the old message format',
      () =>
        diagnoseText(
          tb(
            [frame('tools/train.py', 'main'), frame('tools/eval.py', 'evaluate', 'pred = net(x)'), ...FORWARD],
            'RuntimeError: CUDA out of memory. Tried to allocate 1.02 GiB (GPU 1; 10.76 GiB total capacity; 8.66 GiB already allocated; 752.56 MiB free; 9.04 GiB reserved in total by PyTorch)',
            '[rank1]: ',
          ),
        ),
    ],
  ])('%s', async (_name, run) => {
    const d = await run();
    expect(d.category).toBe('cuda_oom');
    expect(first(d).summary).toMatch(/no_grad|inference_mode/);
    expectBatchNotFirst(d);
  });
});

describe("HF Trainer's evaluation forward, no eval_accumulation_steps set -> eval_accumulation_steps (not any batch)", () => {
  it.each([
    ['real: NVIDIA-Merlin/Transformers4Rec#693', () => real('transformers4rec-693-trainer-evaluate.log')],
    [
      'prediction_step during an eval-only run with a training batch of 32',
      () =>
        diagnoseText(
          'python run_eval.py --model_name_or_path Qwen/Qwen2.5-7B --per_device_train_batch_size 32 --do_eval\n' +
            tb(
              [
                frame('run_eval.py', 'main', 'metrics = trainer.evaluate()'),
                frame(`${SITE}/transformers/trainer.py`, 'evaluate'),
                frame(`${SITE}/transformers/trainer.py`, 'evaluation_loop'),
                frame(`${SITE}/transformers/trainer.py`, 'prediction_step'),
                ...FORWARD,
              ],
              oom('2.32 GiB', '79.19 GiB', '1.01 GiB', '78.17 GiB', '76.40 GiB', '1.12 GiB'),
            ),
        ),
    ],
  ])('%s', async (_name, run) => {
    const d = await run();
    expect(d.category).toBe('cuda_oom');
    expect(first(d).summary).toMatch(/sets no eval_accumulation_steps.*prediction_loss_only/);
    expectBatchNotFirst(d);
    // No evaluation batch is stated: none is halved, and the training batch never is.
    expect(d.fixes.some((f) => /halve it to/.test(f.summary))).toBe(false);
    expect(d.fixes.every((f) => f.changes.batch === undefined)).toBe(true);
  });
});

describe("Lightning's validation -> the validation loader's batch and what validation_step keeps", () => {
  it.each([
    [
      'frames of the sanity check',
      tb(
        [
          frame(`${SITE}/lightning/pytorch/trainer/trainer.py`, 'fit'),
          frame(`${SITE}/lightning/pytorch/trainer/trainer.py`, '_run_sanity_check'),
          frame(`${SITE}/lightning/pytorch/loops/evaluation_loop.py`, 'run'),
          frame('model.py', 'validation_step'),
          ...FORWARD,
        ],
        oom('768.00 MiB', '15.77 GiB', '402.12 MiB', '15.36 GiB', '14.80 GiB', '212.44 MiB'),
      ),
    ],
    [
      'only its progress bar',
      [
        'Epoch 3: 100%|██████████| 1250/1250 [05:12<00:00,  4.00it/s, v_num=7]',
        'Validation DataLoader 0:  38%|███▊      | 19/50 [00:04<00:07,  4.21it/s]',
        oom('1.50 GiB', '23.65 GiB', '1.20 GiB', '22.42 GiB', '21.88 GiB', '301.00 MiB'),
      ].join('\n'),
    ],
  ])('%s', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d.category).toBe('cuda_oom');
    expect(first(d).summary).toMatch(/validation DataLoader's batch_size/);
    expectBatchNotFirst(d);
  });
});

describe('the model load -> the dtype first (a request the size of one fp32 weight matrix says fp32)', () => {
  const loadFrames = [
    frame('serve.py', 'main', 'model = AutoModelForCausalLM.from_pretrained(path, device_map="cuda")'),
    frame(`${SITE}/transformers/modeling_utils.py`, 'from_pretrained'),
    frame(`${SITE}/transformers/modeling_utils.py`, '_load_pretrained_model'),
    frame(`${SITE}/transformers/modeling_utils.py`, '_load_state_dict_into_meta_model'),
  ];
  it.each([
    [
      'Llama-70B MLP matrix, 28672 × 8192 × 4 bytes = 896 MiB, [rank0]: prefixes',
      tb(loadFrames, oom('896.00 MiB', '139.72 GiB', '612.00 MiB', '139.10 GiB', '138.52 GiB', '10.00 MiB'), '[rank0]: '),
      /28672 × 8192 × 4 bytes/,
    ],
    [
      'Llama-3-8B MLP matrix through model.to(), 14336 × 4096 × 4 bytes = 224 MiB, old message',
      tb(
        [
          frame('train.py', 'main', 'model.to(device)'),
          frame(`${SITE}/torch/nn/modules/module.py`, 'to'),
          frame(`${SITE}/torch/nn/modules/module.py`, '_apply'),
          frame(`${SITE}/torch/nn/modules/module.py`, 'convert'),
        ],
        'RuntimeError: CUDA out of memory. Tried to allocate 224.00 MiB (GPU 0; 23.65 GiB total capacity; 23.02 GiB already allocated; 96.06 MiB free; 23.05 GiB reserved in total by PyTorch)',
      ),
      /14336 × 4096 × 4 bytes/,
    ],
    [
      'Qwen2.5-7B MLP matrix, 18944 × 3584 × 4 bytes = 259 MiB',
      tb(loadFrames, oom('259.00 MiB', '23.53 GiB', '101.00 MiB', '23.42 GiB', '23.16 GiB', '20.00 MiB')),
      /18944 × 3584 × 4 bytes/,
    ],
  ])('%s', async (_name, text, matrix) => {
    const d = await diagnoseText(text);
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.phase).toBe('load');
    expect(d.facts.dtype).toBe('fp32');
    expect(first(d).summary).toMatch(/torch_dtype=torch\.bfloat16/);
    expect(first(d).summary).toMatch(matrix);
    expectBatchNotFirst(d);
  });

  it('the same matrix in bf16 (448 MiB) is no evidence of fp32: the weights lever (quantize, split), not the dtype one', async () => {
    const d = await diagnoseText(tb(loadFrames, oom('448.00 MiB', '79.19 GiB', '212.00 MiB', '78.97 GiB', '78.50 GiB', '20.00 MiB')));
    expect(d.facts.dtype).toBeUndefined();
    expect(first(d).summary).not.toMatch(/Load the weights in half precision/);
    expect(first(d).summary).toMatch(/quantized/);
    expectBatchNotFirst(d);
  });

  it('a load that states bf16 gets the weights lever (quantize, split), not the dtype one', async () => {
    const d = await diagnoseText(
      'model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.bfloat16)\n' +
        tb(loadFrames, oom('448.00 MiB', '79.19 GiB', '212.00 MiB', '78.97 GiB', '78.50 GiB', '20.00 MiB')),
    );
    expect(first(d).summary).not.toMatch(/Load the weights in half precision/);
    expectBatchNotFirst(d);
  });

  it('real: tloen/alpaca-lora#389 (from_pretrained, no figures): no batch first', async () => {
    const d = await real('alpaca-lora-389-from-pretrained.log');
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.phase).toBe('load');
    expectBatchNotFirst(d);
  });
});

describe('a checkpoint read or a collective -> map_location / set_device', () => {
  it.each([
    [
      'torch.load of a resume checkpoint',
      tb(
        [
          frame('train.py', 'resume', 'ckpt = torch.load(args.resume)'),
          frame(`${SITE}/torch/serialization.py`, 'load'),
          frame(`${SITE}/torch/serialization.py`, '_load'),
          frame(`${SITE}/torch/serialization.py`, 'persistent_load'),
        ],
        oom('1.00 GiB', '23.65 GiB', '812.00 MiB', '22.85 GiB', '22.40 GiB', '220.00 MiB'),
      ),
      /map_location="cpu"/,
    ],
    [
      'a barrier under [rank3]: prefixes',
      tb(
        [
          frame('train.py', 'main', 'dist.barrier()'),
          frame(`${SITE}/torch/distributed/c10d_logger.py`, 'wrapper'),
          frame(`${SITE}/torch/distributed/distributed_c10d.py`, 'barrier'),
        ],
        oom('20.00 MiB', '79.19 GiB', '11.06 MiB', '79.17 GiB', '256.00 MiB', '0 bytes'),
        '[rank3]: ',
      ),
      /set_device/,
    ],
  ])('%s', async (_name, text, lever) => {
    const d = await diagnoseText(text);
    expect(d.category).toBe('cuda_oom');
    expect(first(d).summary).toMatch(lever);
    expectBatchNotFirst(d);
  });
});

describe("the batch lever's preconditions", () => {
  const trainFrames = [frame('train.py', 'main'), frame('train.py', 'train_one_epoch', 'out = model(images)'), ...FORWARD];

  it('all hold (a training forward, a known batch of 32, the card is the process): halve it, keep the effective batch', async () => {
    const d = await diagnoseText(
      'python train.py --batch-size 32 --epochs 100\n' + tb(trainFrames, oom('1.25 GiB', '23.65 GiB', '410.00 MiB', '23.23 GiB', '22.79 GiB', '198.00 MiB')),
    );
    expect(d.category).toBe('cuda_oom');
    expect(first(d).changes.batch).toBe(16);
  });

  it('the static part alone is over the card (13B full fine-tune on 24 GB): no batch first', async () => {
    const d = await diagnoseText(
      'python finetune.py --model_name_or_path meta-llama/Llama-2-13b-hf --per_device_train_batch_size 8\n' +
        tb(
          [frame(`${SITE}/transformers/trainer.py`, 'training_step'), ...FORWARD],
          oom('270.00 MiB', '23.65 GiB', '90.00 MiB', '23.54 GiB', '23.10 GiB', '150.00 MiB'),
        ),
    );
    expectBatchNotFirst(d);
    expect(first(d).summary).toMatch(/LoRA|ZeRO|optimizer/);
  });

  it("a growth series in the paste: the OOM's own diagnosis says something accumulates, no batch first", async () => {
    const lines = [10240, 11010, 11790, 12560, 13330, 14100, 14880, 15650].map(
      (m, i) =>
        `2024/05/01 10:${String(10 + i).padStart(2, '0')}:00 - mmengine - INFO - Epoch(train)  [1][${(i + 1) * 50}/2000]  lr: 1.0000e-04  eta: 2:10:00  time: 0.5102  data_time: 0.0100  memory: ${m}  loss: 1.2034`,
    );
    const file = join(dir, `case-${n++}.log`);
    writeFileSync(
      file,
      [
        'python tools/train.py configs/my_cfg.py --batch-size 8',
        ...lines,
        tb(trainFrames, oom('512.00 MiB', '15.77 GiB', '300.00 MiB', '15.46 GiB', '15.10 GiB', '120.00 MiB')),
      ].join('\n'),
    );
    // The leak rule may answer first; the CUDA OOM's own diagnosis must not halve the batch either.
    const oomDiagnosis = (await diagnoseAll(file)).find((d) => d.rule === 'cuda-oom')!;
    expect(oomDiagnosis.facts.memoryShape).toBe('growth');
    expectBatchNotFirst(oomDiagnosis);
    expect(first(oomDiagnosis).summary).toMatch(/accumulates/);
  });

  it('the batch is not stated: the reply gives the experiment that decides (one step at batch 1)', async () => {
    const d = await diagnoseText(tb(trainFrames, 'RuntimeError: CUDA out of memory.'));
    expect(d.category).toBe('cuda_oom');
    expect(first(d).summary).toMatch(/one step at batch 1/);
    expect(first(d).changes.batch).toBeUndefined();
  });
});
