// PEFT's trainable-parameter line in a LoRA run (src/diagnose/levers/lora-trainable.ts): adapters alone are a few
// percent of a model, so a share of a tenth or more means whole layers (embedding, output layer) train beside them,
// and those layers' states, not the batch, are the first lever. Real: blind9/5762 (a read split,
// https://github.com/QwenLM/Qwen/issues/1002); the others are synthetic variants written from PEFT's format (with and
// without thousands commas, a small adapter share, a full fine-tune's 100%).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TEST_TIMEOUT = 180_000;
const first = async (paste: string) => (await diagnosePaste(paste))?.fixes[0]?.summary ?? '';
const run = (line: string, method = 'finetuning_type: lora') =>
  `${method}\nLoading checkpoint shards: 100%|██████████| 4/4 [00:05<00:00,  1.30s/it]\n${line}\n  0%|          | 0/1000 [00:00<?, ?it/s]\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 250.00 MiB. GPU 0 has a total capacity of 23.64 GiB of which 120.06 MiB is free. Including non-PyTorch memory, this process has 23.51 GiB memory in use. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 180.20 MiB is reserved by PyTorch but unallocated.`;

describe('a LoRA run that trains a tenth of the model or more: the trained layers before the batch', () => {
  it(
    'real: blind9/5762 (676M of 2.5B trainable, 26.9%, Qwen finetune.py LoRA on a base model)',
    async () => {
      const d = await firstOfCase('blind9', '5762');
      expect(d?.fixes[0].summary).toMatch(
        /^PEFT reports "trainable params: 676,003,840 \|\| all params: 2,512,832,512 \|\| trainable%: 26\.9".*modules_to_save/,
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: the line with commas (peft >= 0.5) and without (older peft), 14-40%',
    async () => {
      expect(await first(run('trainable params: 1,102,053,376 || all params: 7,843,868,672 || trainable%: 14.0498'))).toMatch(
        /^PEFT reports "trainable params: 1,102,053,376 .*trainable%: 14\.0".*the batch is not the lever$/,
      );
      expect(await first(run('trainable params: 1638400000 || all params: 4096000000 || trainable%: 40.0', 'use_peft: true, lora_r: 64'))).toMatch(
        /^PEFT reports .*embed_tokens/,
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: adapters alone (0.06%) or a full fine-tune (100%): not this lever',
    async () => {
      expect(await first(run('trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622'))).not.toMatch(/^PEFT reports/);
      expect(await first(run('trainable params: 6,742,609,920 || all params: 6,742,609,920 || trainable%: 100.0000', 'finetuning_type: full'))).not.toMatch(
        /^PEFT reports/,
      );
    },
    TEST_TIMEOUT,
  );
});
