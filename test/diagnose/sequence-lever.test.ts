// The sequence length as a lever (issue 23, src/diagnose/levers/sequence.ts): in a training OOM whose paste
// states a long length (each tool's own setting, or plain prose in English or Chinese) and whose batch is
// already small, activations and logits grow with the tokens per sample, so the first fix is the length, not
// halving the batch. Synthetic variants written from the principle (different tools, writers and languages),
// beside the real Unsloth thread that prompted it (blind/1054: context 18000, batch per device 2).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSequenceLength, sequenceFirst } from '../../src/diagnose/levers/sequence.js';
import { diagnoseFile, type CaseDiagnosis } from './corpus-case.js';
import { incidentOf } from '../../src/diagnose/incident/index.js';

const dir = mkdtempSync(join(tmpdir(), 'sequence-lever-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function write(text: string): string {
  const file = join(dir, `case-${n++}.log`);
  writeFileSync(file, text);
  return file;
}
const diagnoseText = (text: string): Promise<CaseDiagnosis | undefined> => diagnoseFile(write(text));
const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const firstChangesBatch = (d: CaseDiagnosis | undefined) => typeof d?.fixes[0]?.changes.batch === 'number';

const OOM =
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB. GPU 0 has a total capacity of 79.15 GiB of which 5.12 GiB is free. Including non-PyTorch memory, this process has 74.02 GiB memory in use. Of the allocated memory 70.11 GiB is allocated by PyTorch, and 3.40 GiB is reserved by PyTorch but unallocated.';
const TRAIN_FRAMES = [
  'Traceback (most recent call last):',
  '  File "train.py", line 88, in <module>',
  '    trainer.train()',
  '  File "/usr/local/lib/python3.10/site-packages/transformers/trainer.py", line 1859, in train',
  '    return inner_training_loop(',
].join('\n');

describe('the stated length is read from each tool’s own setting and from prose', () => {
  it.each([
    ['TRL / Unsloth keyword', 'max_seq_length=16384,', 16384],
    ['HF script flag', '--max_length 8192 --per_device_train_batch_size 1', 8192],
    ['LLaMA-Factory YAML', 'cutoff_len: 16384', 16384],
    ['HF model_max_length flag', '--model_max_length 32768', 32768],
    ['axolotl YAML', 'sequence_len: 8192', 8192],
    ['ms-swift flag with k', '--max_length 16k', 16384],
    ['English prose', 'the data has a context length of 18000 tokens', 18000],
    ['English prose, seq len', 'training at seq len 8192 on one card', 8192],
    ['Chinese prose, 上下文长度', '我用的上下文长度 16k，一开始训练就爆显存', 16384],
    ['Chinese prose, 序列长度', '序列长度为8192，batch size 为1', 8192],
  ])('%s', (_name, text, tokens) => {
    expect(readSequenceLength(text).sequence.seqLen).toBe(tokens);
    expect(readSequenceLength(text).sequence.seqLenSetting).toBeTruthy();
  });
  it('a decimal, a word or no number is no length', () => {
    expect(readSequenceLength('max_length=0.5').sequence.seqLen).toBeUndefined();
    expect(readSequenceLength('the sequence length matters a lot').sequence.seqLen).toBeUndefined();
    expect(readSequenceLength('max_length: auto').sequence.seqLen).toBeUndefined();
  });
  it("a tokenizer's own maximum (its repr) is not the length the run trains at", () => {
    expect(readSequenceLength("PreTrainedTokenizerFast(name_or_path='meta-llama/Llama-3.1-8B', model_max_length=131072)").sequence.seqLen).toBeUndefined();
    expect(readSequenceLength('generation_max_length=16384').sequence.seqLen).toBeUndefined();
  });
});

describe('preconditions: training, a long length, a small or unstated batch, the batch lever’s other evidence', () => {
  const base = incidentOf({ run: { training: true, batch: 2 }, sequence: { seqLen: 16384 } });
  it('training at 16384 tokens with batch 2: the length', () => expect(sequenceFirst(base)).toBe(true));
  it('the batch not stated: the length', () => expect(sequenceFirst(incidentOf(base, { run: { batch: undefined } }))).toBe(true));
  it('a short length does not trigger', () => expect(sequenceFirst(incidentOf(base, { sequence: { seqLen: 2048 } }))).toBe(false));
  it('a batch of 16 keeps the batch lever', () => expect(sequenceFirst(incidentOf(base, { run: { batch: 16 } }))).toBe(false));
  it('not training does not trigger', () => expect(sequenceFirst(incidentOf(base, { run: { training: undefined } }))).toBe(false));
  it('a server does not trigger', () => expect(sequenceFirst(incidentOf(base, { run: { inference: true } }))).toBe(false));
  it('growth does not trigger', () => expect(sequenceFirst(incidentOf(base, { series: { memoryShape: 'growth' } }))).toBe(false));
  it('evaluation does not trigger', () => expect(sequenceFirst(incidentOf(base, { phase: { name: 'eval' } }))).toBe(false));
});

describe('through the engine: the first fix is the sequence length, not the batch', () => {
  it.each([
    [
      'TRL SFTTrainer, max_seq_length=16384, batch 1',
      `args = SFTConfig(max_seq_length=16384, per_device_train_batch_size=1)\n${TRAIN_FRAMES}\n${OOM}`,
      '16384',
    ],
    [
      'LLaMA-Factory, cutoff_len 16384, batch 2',
      `llamafactory-cli train sft.yaml\ncutoff_len: 16384\nper_device_train_batch_size: 2\nfinetuning_type: lora\n${TRAIN_FRAMES}\n${OOM}`,
      '16384',
    ],
    [
      'HF run script, --model_max_length 32768, batch 1',
      `torchrun --nproc_per_node 8 train.py --model_max_length 32768 --per_device_train_batch_size 1\n${TRAIN_FRAMES}\n${OOM}`,
      '32768',
    ],
    ['axolotl, sequence_len 8192, batch 2', `sequence_len: 8192\nmicro_batch_size: 2\nbatch_size: 2\n${TRAIN_FRAMES}\n${OOM}`, '8192'],
    ['English prose, context length of 18000', `Fine-tuning Llama-3 with a context length of 18000, batch size 2.\n${TRAIN_FRAMES}\n${OOM}`, '18000'],
    ['Chinese prose, 序列长度 8192', `用 LoRA 微调 Qwen2-7B，序列长度 8192，batch size 为1，一训练就爆显存\n${TRAIN_FRAMES}\n${OOM}`, '8192'],
  ])('%s', async (_name, text, quoted) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/long sequences/);
    expect(first(d)).toContain(quoted);
    expect(firstChangesBatch(d)).toBe(false);
  });

  it('a batch of 16 at length 2048 keeps the batch lever', async () => {
    const d = await diagnoseText(`--max_length 2048 --per_device_train_batch_size 16\n${TRAIN_FRAMES}\n${OOM}`);
    expect(first(d)).not.toMatch(/long sequences/);
    expect(firstChangesBatch(d)).toBe(true);
  });

  it('a short length at batch 2 does not trigger', async () => {
    const d = await diagnoseText(`SFTConfig(max_seq_length=1024, per_device_train_batch_size=2)\n${TRAIN_FRAMES}\n${OOM}`);
    expect(first(d)).not.toMatch(/long sequences/);
  });

  it('a vLLM server with a long max_model_len is not training: no sequence-length training advice', async () => {
    const d = await diagnoseText(
      [
        'vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768 --max_length 32768',
        'INFO 05-02 10:00:00 llm_engine.py:100] Initializing an LLM engine (v0.6.3) with config: model=meta-llama/Llama-3.1-8B-Instruct, max_seq_len=32768',
        OOM,
      ].join('\n'),
    );
    expect((d?.fixes ?? []).some((f) => /long sequences/.test(f.summary))).toBe(false);
  });
});

describe('the CLI (`gpu-doctor diagnose --json`)', () => {
  it('a long Unsloth context at batch per device 2: the length first, quoted, halved to test', async () => {
    const file = write(
      [
        'QLoRA finetuning with Unsloth on a T4, with a max context length of 18000.',
        '==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1',
        '   \\\\   /|    Num examples = 102 | Num Epochs = 5',
        'O^O/ \\_/ \\    Batch size per device = 2 | Gradient Accumulation steps = 4',
        '\\        /    Total batch size = 8 | Total steps = 60',
        '----> 1 trainer_stats = trainer.train()',
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.60 GiB. GPU 0 has a total capacity of 14.75 GiB of which 3.10 GiB is free.',
      ].join('\n'),
    );
    const d = (await diagnoseFile(file))!;
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.seqLen).toBe(18000);
    expect(d.fixes[0].summary).toMatch(/long sequences \(max context length of 18000\)/);
    expect(d.fixes[0].summary).toMatch(/9000/);
    expect(d.fixes[0].changes.batch).toBeUndefined();
    // The batch lever stays, after it.
    expect(d.fixes.some((f: { changes: { batch?: number } }) => f.changes.batch === 1)).toBe(true);
  });
});
