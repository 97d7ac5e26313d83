// The phase of a failure from its traceback (src/diagnose/phase.ts): frames are read in each format a
// paste carries them (plain Python, IPython 7/8, rich), after launcher prefixes are stripped, and the
// innermost frame that says more than "a forward ran" decides. Written from the principle, with the
// frame names of each framework's own loops, in several orders and with and without [rankN]: prefixes.
import { describe, expect, it } from 'vitest';
import { LogText, normalizeLog } from '../../src/diagnose/normalize.js';
import { failurePhase, frameOf, phaseFromFrames, type Frame } from '../../src/diagnose/phase.js';

type Style = 'std' | 'ipy8' | 'ipy7' | 'rich';

/** A traceback (outermost frame first) in one paste style, ending in `error`, each line under `prefix`. */
function traceback(frames: [string, string][], error: string, style: Style = 'std', prefix = ''): string {
  const lines = style === 'std' ? ['Traceback (most recent call last):'] : ['-'.repeat(40), 'OutOfMemoryError    Traceback (most recent call last)'];
  if (style !== 'std') lines.pop(); // IPython prints the exception type above its frames; keep the error last here
  for (const [file, fn] of frames) {
    if (style === 'std') lines.push(`  File "${file}", line 42, in ${fn}`, '    result = call()');
    if (style === 'ipy8') lines.push(`File ${file}:42, in Obj.${fn}(self, *args)`, '     41 x = 1', '---> 42 result = call()');
    if (style === 'ipy7') lines.push(`${file} in ${fn}(self, *args)`, '---> 42 result = call()');
    if (style === 'rich') lines.push(`│ ${file}:42 in ${fn}                                  │`);
  }
  lines.push(error);
  return lines.map((l) => prefix + l).join('\n');
}

const phaseOfText = (text: string) => {
  const log = new LogText(normalizeLog(text));
  let errorLine = log.lineCount - 1;
  while (errorLine > 0 && !/Error|error:/.test(log.line(errorLine))) errorLine--;
  return failurePhase(log, errorLine);
};

const OOM = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.2 GiB is free.';
const SITE = '/usr/lib/python3.11/site-packages';
const forwardFrames: [string, string][] = [
  [`${SITE}/torch/nn/modules/module.py`, '_wrapped_call_impl'],
  [`${SITE}/torch/nn/modules/module.py`, '_call_impl'],
  [`${SITE}/transformers/models/llama/modeling_llama.py`, 'forward'],
  [`${SITE}/torch/nn/functional.py`, 'scaled_dot_product_attention'],
];

describe('frames in every paste format', () => {
  it.each([
    ['  File "/x/trainer.py", line 3, in evaluation_loop', 'evaluation_loop'],
    ['File /x/trainer.py:2113, in Trainer.evaluate(self, eval_dataset)', 'evaluate'],
    ['/x/torch/nn/modules/module.py in _call_impl(self, *input, **kwargs)', '_call_impl'],
    ['│ C:\\H1111\\modules\\custom_offloading_utils.py:105 in weighs_to_device │', 'weighs_to_device'],
  ])('%s', (line, fn) => {
    expect(frameOf(line)?.fn).toBe(fn);
  });

  it('prose that names a function is not a frame', () => {
    expect(frameOf('I call trainer.evaluate in my script and it fails')).toBeUndefined();
  });
});

describe('the phase: the innermost frame that says more than a forward decides', () => {
  const cases: [string, [string, string][], string, Record<string, unknown>][] = [
    [
      'HF Trainer gathering predictions (nested_concat) inside training',
      [
        ['train.py', 'main'],
        [`${SITE}/transformers/trainer.py`, '_inner_training_loop'],
        [`${SITE}/transformers/trainer.py`, '_maybe_log_save_evaluate'],
        [`${SITE}/transformers/trainer.py`, 'evaluate'],
        [`${SITE}/transformers/trainer.py`, 'evaluation_loop'],
        [`${SITE}/transformers/trainer_pt_utils.py`, 'nested_concat'],
        [`${SITE}/transformers/trainer_pt_utils.py`, 'torch_pad_and_concatenate'],
      ],
      'eval',
      { gathersPredictions: true, evalLoop: 'hf' },
    ],
    [
      'HF Trainer evaluation forward',
      [[`${SITE}/transformers/trainer.py`, 'evaluate'], [`${SITE}/transformers/trainer.py`, 'prediction_step'], ...forwardFrames],
      'eval',
      { evalLoop: 'hf' },
    ],
    [
      'Lightning validation inside fit',
      [
        [`${SITE}/lightning/pytorch/trainer/trainer.py`, 'fit'],
        [`${SITE}/lightning/pytorch/trainer/trainer.py`, '_run_sanity_check'],
        [`${SITE}/lightning/pytorch/loops/evaluation_loop.py`, 'run'],
        ['model.py', 'validation_step'],
        ...forwardFrames,
      ],
      'eval',
      { evalLoop: 'lightning' },
    ],
    ["a script's own validate()", [['train.py', 'main'], ['train.py', 'train'], ['train.py', 'validate'], ...forwardFrames], 'eval', { evalLoop: 'plain' }],
    [
      'backward inside a training step',
      [
        [`${SITE}/transformers/trainer.py`, 'training_step'],
        [`${SITE}/accelerate/accelerator.py`, 'backward'],
        [`${SITE}/torch/autograd/__init__.py`, 'backward'],
      ],
      'backward',
      {},
    ],
    ['a training forward', [['train.py', 'train_one_epoch'], ...forwardFrames], 'forward', {}],
    [
      'AdamW creating its state',
      [
        ['train.py', 'train'],
        [`${SITE}/torch/optim/adamw.py`, 'step'],
        [`${SITE}/torch/optim/adamw.py`, '_init_group'],
      ],
      'optimizer',
      {},
    ],
    [
      'from_pretrained placing weights',
      [
        ['serve.py', 'main'],
        [`${SITE}/transformers/modeling_utils.py`, 'from_pretrained'],
        [`${SITE}/transformers/modeling_utils.py`, '_load_pretrained_model'],
        [`${SITE}/transformers/modeling_utils.py`, 'load_state_dict'],
      ],
      'load',
      {},
    ],
    [
      'model.to(device)',
      [
        ['train.py', 'main'],
        [`${SITE}/torch/nn/modules/module.py`, 'to'],
        [`${SITE}/torch/nn/modules/module.py`, '_apply'],
      ],
      'load',
      {},
    ],
    [
      'torch.load of a checkpoint',
      [
        ['train.py', 'resume'],
        [`${SITE}/torch/serialization.py`, 'load'],
        [`${SITE}/torch/serialization.py`, '_load'],
        [`${SITE}/torch/serialization.py`, 'persistent_load'],
      ],
      'checkpoint',
      {},
    ],
    [
      'generate()',
      [
        ['chat.py', 'main'],
        [`${SITE}/transformers/generation/utils.py`, 'generate'],
        [`${SITE}/transformers/generation/utils.py`, '_sample'],
        ...forwardFrames,
      ],
      'generate',
      {},
    ],
    [
      'vLLM profiling at start-up',
      [
        [`${SITE}/vllm/v1/engine/core.py`, '_initialize_kv_caches'],
        [`${SITE}/vllm/v1/worker/gpu_worker.py`, 'determine_available_memory'],
        [`${SITE}/vllm/v1/worker/gpu_model_runner.py`, 'profile_run'],
        ...forwardFrames,
      ],
      'generate',
      {},
    ],
    [
      'a DataLoader worker',
      [
        ['train.py', 'train'],
        [`${SITE}/torch/utils/data/dataloader.py`, '__next__'],
        [`${SITE}/torch/utils/data/_utils/fetch.py`, 'fetch'],
      ],
      'data',
      {},
    ],
    [
      'a barrier',
      [
        ['train.py', 'main'],
        [`${SITE}/torch/distributed/c10d_logger.py`, 'wrapper'],
        [`${SITE}/torch/distributed/distributed_c10d.py`, 'barrier'],
      ],
      'collective',
      {},
    ],
    [
      'DDP verifying parameters',
      [
        ['train.py', 'main'],
        [`${SITE}/torch/nn/parallel/distributed.py`, '__init__'],
        [`${SITE}/torch/distributed/utils.py`, '_verify_param_shape_across_processes'],
      ],
      'collective',
      {},
    ],
  ];

  for (const [name, frames, phase, extra] of cases) {
    for (const style of ['std', 'ipy8', 'rich'] as Style[]) {
      for (const prefix of ['', '[rank1]: ']) {
        it(`${name} (${style}${prefix ? ', [rank1]: prefix' : ''})`, () => {
          const verdict = phaseOfText(traceback(frames, OOM, style, prefix));
          expect(verdict?.phase).toBe(phase);
          expect(verdict).toMatchObject(extra);
          expect(verdict?.frame).toMatch(/, in \w+|\w/);
        });
      }
    }
  }

  it('frames are read innermost first: the same frames in another order give another phase', () => {
    const inner: Frame[] = [
      { file: 'train.py', fn: 'validate' },
      { file: `${SITE}/torch/optim/adamw.py`, fn: 'step' },
    ];
    expect(phaseFromFrames(inner)?.phase).toBe('eval');
    expect(phaseFromFrames([...inner].reverse())?.phase).toBe('optimizer');
  });

  it('a paste that puts the message above its traceback is read below it', () => {
    const frames: [string, string][] = [['train.py', 'main'], ['train.py', 'evaluate'], ...forwardFrames];
    const text = [OOM, 'Traceback (most recent call last):', ...frames.map(([f, fn]) => `  File "${f}", line 1, in ${fn}`)].join('\n');
    const log = new LogText(normalizeLog(text));
    expect(failurePhase(log, 0)?.phase).toBe('eval');
  });

  it("without frames, a framework's own progress line says evaluation", () => {
    const text = ['Epoch 0: 100%|██████| 500/500 [01:40<00:00]', 'Validation DataLoader 0:  12%|█▏        | 6/50 [00:02<00:15]', OOM].join('\n');
    expect(phaseOfText(text)).toMatchObject({ phase: 'eval', evalLoop: 'lightning' });
  });

  it.each(['evaluate_model', 'do_eval', 'val_one_epoch', 'validate_and_log', 'run_val'])(
    "a script's own evaluation function named by its words (%s) is the evaluation phase",
    (fn) => {
      const v = phaseOfText(traceback([['train.py', 'main'], ['train.py', fn], ...forwardFrames], OOM));
      expect(v?.phase).toBe('eval');
      expect(v?.evalLoop).toBe('plain');
    },
  );

  it.each(['test_forward_large_batch', 'interval_step', 'evalf', 'retrieval_loss'])('a name without an evaluation word (%s) is not evaluation', (fn) => {
    const v = phaseOfText(traceback([['train.py', 'main'], ['train.py', fn], ...forwardFrames], OOM));
    expect(v?.phase).not.toBe('eval');
  });

  it('no frames and no phase line: no phase is claimed', () => {
    expect(phaseOfText(['step 10 loss 2.31', OOM].join('\n'))).toBeUndefined();
  });

  it('a hostile 1 MB frame-like line is read through a bounded slice and claims nothing', () => {
    expect(phaseOfText(['  File "' + 'a'.repeat(1_000_000), OOM].join('\n'))).toBeUndefined();
  });
});
