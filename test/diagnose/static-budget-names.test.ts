// The static part of the memory budget read from what the paste names (issue 23, items 2-3): a checkpoint's
// quantization marker sizes its weights (-bnb-4bit, -4bit, GPTQ, AWQ, Int4, GGUF Q4_K_M at 4 bits; -8bit, Int8,
// Q8_0 at 8), Qwen's "1_8B" is 1.8 billion, Unsloth's banner / FastLanguageModel / get_peft_model train adapters
// without the word LoRA, a trainer's own full-training setting wins over lora_* keys it ignores, and a static part
// of >= 3/4 of the card at a stated batch of 1 or 2 puts the static part first. Synthetic variants written from
// each principle, through the CLI (`gpu-doctor diagnose --json`), beside the real thread sealed/909.
import { describe, expect, it } from 'vitest';
import { modelParamsB, weightsDtype } from '../../src/diagnose/settings.js';
import { firstOfCase, type CaseDiagnosis, diagnosePaste } from './corpus-case.js';

// Each paste goes to the CLI's own entry on stdin, in process (corpus-case.ts).
const diagnoseText = diagnosePaste;
const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const oldOom = (tried: string, total: string, allocated: string, free: string, reserved: string) =>
  `torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tried} (GPU 0; ${total} total capacity; ${allocated} already allocated; ${free} free; ${reserved} reserved in total by PyTorch)`;

describe("a checkpoint's name says how many bits its weights take", () => {
  it.each([
    ['unsloth/llama-3-8b-bnb-4bit', 'int4'],
    ['mlx-community/Mistral-7B-Instruct-v0.3-4bit', 'int4'],
    ['TheBloke/Llama-2-13B-chat-GPTQ', 'int4'],
    ['Qwen/Qwen2-7B-Instruct-AWQ', 'int4'],
    ['THUDM/chatglm2-6b-int4', 'int4'],
    ['llama-2-7b-chat.Q4_K_M.gguf', 'int4'],
    ['Qwen/Qwen1.5-14B-Chat-GPTQ-Int8', 'int4'],
    ['someone/falcon-7b-8bit', 'int8'],
    ['mistral-7b-instruct-v0.2.Q8_0.gguf', 'int8'],
    ['THUDM/chatglm-6b-int8', 'int8'],
  ])('%s -> %s', (name, dtype) => {
    expect(weightsDtype(`model_name_or_path: ${name}`)).toBe(dtype);
  });
  it.each([
    ['an 8-bit optimizer', '--optim adamw_bnb_8bit --bf16'],
    ['a paged 8-bit optimizer', 'optim="paged_adamw_8bit"'],
    ['a loading flag set off', 'load_in_8bit=False, load_in_4bit=False'],
    ['a plain model name', 'meta-llama/Llama-2-7b-hf'],
  ])('%s is no quantized checkpoint', (_name, text) => {
    expect(['int4', 'int8']).not.toContain(weightsDtype(text));
  });
  it("Qwen's underscore is the size's decimal point; an underscore between name parts is not", () => {
    expect(modelParamsB('--model_name_or_path /data/Qwen-1_8B', undefined)).toBe(1.8);
    expect(modelParamsB('Qwen/Qwen1.5-0_5B-Chat', undefined)).toBe(0.5);
    expect(modelParamsB('llama_2_7b', undefined)).toBe(7);
  });
});

describe('through the CLI: the quantized weights are sized as such', () => {
  it('a 13B GPTQ checkpoint on a 24 GB card: 4-bit weights (~6 GiB) do not fill it, so quantizing is not the first fix', async () => {
    const d = await diagnoseText(
      [
        'Running TheBloke/Llama-2-13B-chat-GPTQ with AutoGPTQ on my 3090 for long prompts',
        'Traceback (most recent call last):',
        '  File "chat.py", line 40, in <module>',
        '    out = model.generate(**inputs, max_new_tokens=2048)',
        oldOom('1.20 GiB', '23.69 GiB', '22.40 GiB', '200.00 MiB', '22.61 GiB'),
      ].join('\n'),
    );
    expect(d?.facts.dtype).toBe('int4');
    expect(first(d)).not.toMatch(/weights are what fills the card|load the model quantized/i);
  });
  it('an 8B "-bnb-4bit" base trained with Unsloth (no word LoRA): adapters on a 4-bit base, so the batch of 8 is the lever', async () => {
    const d = await diagnoseText(
      [
        'from unsloth import FastLanguageModel',
        'model, tokenizer = FastLanguageModel.from_pretrained("unsloth/llama-3-8b-bnb-4bit", max_seq_length=2048)',
        'model = FastLanguageModel.get_peft_model(model, r=16)',
        '==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1',
        'O^O/ \\_/ \\    Batch size per device = 8 | Gradient Accumulation steps = 1',
        '----> 1 trainer_stats = trainer.train()',
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 14.75 GiB of which 1.10 GiB is free. Process 2211 has 13.64 GiB memory in use. Of the allocated memory 12.90 GiB is allocated by PyTorch, and 600.21 MiB is reserved by PyTorch but unallocated.',
      ].join('\n'),
    );
    expect(d?.facts).toMatchObject({ dtype: 'int4', adapterTraining: true, paramsB: 8 });
    expect(first(d)).not.toMatch(/static part alone does not fit/);
    expect(d?.fixes[0]?.changes.batch).toBe(4);
  });
  it.each([
    ['the Unsloth banner alone', '==((====))==  Unsloth 2024.8: Fast Llama patching. Transformers = 4.44.2.'],
    ['get_peft_model in the code', 'model = get_peft_model(model, config)'],
  ])('%s says adapter training', async (_name, line) => {
    const d = await diagnoseText(
      [
        line,
        'trainer.train() with meta-llama/Llama-2-7b-hf, per_device_train_batch_size=4',
        oldOom('172.00 MiB', '23.65 GiB', '22.81 GiB', '98.06 MiB', '22.95 GiB'),
      ].join('\n'),
    );
    expect(d?.facts.adapterTraining).toBe(true);
    // 7B × 16 B/param of full training would be "the static part alone does not fit"; adapters keep the batch lever.
    expect(first(d)).not.toMatch(/static part alone does not fit/);
  });
  it("Unsloth's full_finetuning=True is full training", async () => {
    const d = await diagnoseText(
      [
        'model, tok = FastLanguageModel.from_pretrained("unsloth/Qwen2.5-0.5B", full_finetuning = True)',
        'trainer.train()',
        oldOom('172.00 MiB', '23.65 GiB', '22.81 GiB', '98.06 MiB', '22.95 GiB'),
      ].join('\n'),
    );
    expect(d?.facts.adapterTraining).toBeUndefined();
  });
});

describe('a static part of >= 3/4 of the card at a stated batch of 1 or 2: the static part first', () => {
  const lf = (model: string, batch: number, card = '31.74 GiB', allocated = '30.80 GiB', reserved = '31.02 GiB') =>
    [
      `llamafactory-cli train --stage sft --model_name_or_path ${model} --finetuning_type full --lora_target all --per_device_train_batch_size ${batch} --fp16`,
      oldOom('20.00 MiB', card, allocated, '11.06 MiB', reserved),
    ].join('\n');
  it.each([
    ['Qwen-1_8B full fine-tune at batch 2 on 32 GB (lora_target ignored under finetuning_type full)', lf('Qwen/Qwen-1_8B', 2)],
    ['the same at batch 1', lf('Qwen/Qwen-1_8B', 1)],
    ['a 2.7B full fine-tune at batch 2 on 48 GB', lf('microsoft/phi-2-2.7b', 2, '47.50 GiB', '46.10 GiB', '46.40 GiB')],
  ])('%s', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d?.facts.adapterTraining).toBeUndefined();
    expect(first(d)).toMatch(/static part takes most of the card/);
    expect(first(d)).toMatch(/ZeRO|offload/);
    expect(d?.fixes[0]?.changes.batch).toBeUndefined();
  });
  it('batch 4 with the same budget: halving the batch stays the lever', async () => {
    const d = await diagnoseText(lf('Qwen/Qwen-1_8B', 4));
    expect(first(d)).not.toMatch(/static part takes most of the card/);
  });
  it('sealed/909 (Qwen-1_8B full pre-training at batch 2 on a 32 GB V100): the static part, not 2 -> 1', async () => {
    const d = await firstOfCase('sealed', '909');
    expect(d?.facts.paramsB).toBe(1.8);
    expect(first(d)).toMatch(/already 2 and the static part takes most of the card/);
    expect(d?.fixes[0]?.changes.batch).toBeUndefined();
  });
});
