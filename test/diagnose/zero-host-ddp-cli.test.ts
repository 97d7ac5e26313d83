// Through the CLI (`gpu-doctor diagnose --json`), issue 23's levers that need evidence: batch 1 whose budget
// points at the static part (most of the card, or ZeRO-1/2 keeping the whole weights; the per-GPU arithmetic when
// the log states the ranks), host-RAM kills whose first fix follows what the log shows (workers only when stated,
// the data's preparation, otherwise the experiment that decides), and DDP's reducer errors as their own diagnosis.
// Synthetic variants written from each principle beside real threads of static5/.
import { describe, expect, it } from 'vitest';
import { firstOfCase, type CaseDiagnosis, diagnosePaste } from './corpus-case.js';

// Each paste goes to the CLI's own entry on stdin, in process (corpus-case.ts).
const diagnoseText = diagnosePaste;
const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const noBatchChange = (d: CaseDiagnosis | undefined) => (d?.fixes ?? []).every((f) => typeof f.changes.batch !== 'number');
const lowersWorkers = (s: string) => /(?:^|[.:;] )(?:Lower|Reduce|Use fewer)[^.]{0,30}workers/.test(s);

const oom = (tried: string, total: string, allocated: string) =>
  `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tried}. GPU 0 has a total capacity of ${total} of which 30.06 MiB is free. Including non-PyTorch memory, this process has ${allocated} memory in use. Of the allocated memory ${allocated} is allocated by PyTorch, and 20.50 MiB is reserved by PyTorch but unallocated.`;

describe('batch 1 under ZeRO-1/2: shard the static part further, with the per-GPU arithmetic when the ranks are stated', () => {
  // (Over the card the static-over-card advice answers with the same arithmetic; under it, the ZeRO advice.)
  it.each([
    [
      '13B, ZeRO-2 over 4 GPUs (--num_gpus 4) on 80 GB',
      `deepspeed --num_gpus 4 train.py --model_name_or_path baichuan-13b --per_device_train_batch_size 1 --deepspeed ds_config_zero2.json --fp16\n  File "train.py", line 88, in <module>\n    loss.backward()\n${oom('1.20 GiB', '79.15 GiB', '77.10 GiB')}`,
      /ZeRO-2 over 4 GPUs: 2 \+ 14\/4\) ≈ 66\.59 GiB/,
    ],
    [
      '7B, "zero_optimization": {"stage": 1}, torchrun --nproc_per_node=8 on 32 GB',
      `torchrun --nproc_per_node=8 finetune.py --model llama-7b --batch_size 1\n"zero_optimization": {"stage": 1}\n  File "finetune.py", line 40, in train\n    optimizer.step()\n${oom('500.00 MiB', '31.75 GiB', '30.90 GiB')}`,
      /ZeRO-1 over 8 GPUs: 4 \+ 12\/8\)/,
    ],
    ['no model size, ZeRO-2, batch 1, no figures', 'even with a batch size of 1 the run OOMs under deepspeed zero2 (H20 96 GB)\nCUDA out of memory', /ZeRO-2/],
  ])('%s', async (_name, text, arithmetic) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/ZeRO-3|offload/);
    expect(first(d)).toMatch(arithmetic);
    expect(noBatchChange(d)).toBe(true);
  });
});

describe('batch 1 in full training whose static part takes most of the card: the static part is the lever', () => {
  it.each([
    [
      'bloom-1b7 full fine-tune on a 32 GB card (79%)',
      'full fine-tuning bigscience/bloom-1b7 with batch_size=1 on my 32G GPU\nloss.backward()\nCUDA out of memory',
    ],
    [
      'gpt-neo-2.7B full fine-tune on 48 GB (84%), figures stated',
      `python run_clm.py --model_name_or_path EleutherAI/gpt-neo-2.7B --per_device_train_batch_size 1 --do_train\n  File "run_clm.py", line 500, in main\n    trainer.train()\n${oom('128.00 MiB', '47.54 GiB', '46.90 GiB')}`,
    ],
  ])('%s', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(first(d)).toMatch(/static part takes most of the card/);
    expect(first(d)).toMatch(/\d{2}% of the \d/);
    expect(noBatchChange(d)).toBe(true);
  });
  it('a small model at batch 1 is not claimed as the static part', async () => {
    const d = await diagnoseText(
      `python train.py --model_name_or_path gpt2 --batch_size 1\n  File "train.py", line 12, in step\n    loss.backward()\n${oom('2.00 GiB', '23.65 GiB', '21.30 GiB')}`,
    );
    expect(first(d)).not.toMatch(/static part takes most of the card/);
  });
  it('the real thread: bloom-1b7 at batch 1 on a 32 GB card (static5/2103)', async () => {
    const d = await firstOfCase('static5', '2103');
    expect(first(d)).toMatch(/1\.7B × 16 B\/param .* 79% of the 32\.00 GiB card/);
  });
  it('the real thread: LaViDa under ZeRO-2 at batch 1 (static5/2105)', async () => {
    expect(first(await firstOfCase('static5', '2105'))).toMatch(/ZeRO-2.*ZeRO-3/);
  });
});

describe('host-RAM kills: a lever needs its evidence, else the experiment that decides', () => {
  it.each([
    ['a bare Killed after a script started', 'python preprocess.py --input corpus.txt\nKilled'],
    ['workers stated as 0 and still killed', 'I set num_workers=0 and batch_size=2, the training still gets killed\nKilled'],
    ['a killed process from dmesg only', '[Sun Mar 30 08:24:00 2025] Out of memory: Killed process 7899 (python) total-vm:26184840kB, anon-rss:15370088kB'],
  ])('%s: the experiment, not "lower the workers"', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('host_oom_killed');
    // With 0 stated (a839944) the experiment sets 0 against the workers the run needs instead of asking for 0 again.
    expect(first(d)).toMatch(/experiment that decides: run (?:it again with num_workers=0|once with num_workers=0 and once with the workers you need)/);
    expect(lowersWorkers(first(d))).toBe(false);
  });
  it.each([
    ['16 workers stated', 'python train.py --workers 16 --batch 32\nepoch 3 step 200 loss 0.41\nKilled', /workers=16 -> 4/],
    ['a worker shown killed', 'RuntimeError: DataLoader worker (pid 12847) is killed by signal: Killed.', /workers/i],
    ['num_workers 为20 in Chinese', '我配置的 num_workers 为20时候，内存一直慢慢涨上来，32G的内存，最后被killed了', /workers=20 -> 4 for 32\.0 GB/],
  ])('%s: the workers lever', async (_name, text, words) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(first(d)).toMatch(words);
  });
  it.each([
    [
      'sentencepiece loading lines',
      'trainer_interface.cc(137) LOG(INFO) Loaded 107000000 lines\ntrainer_interface.cc(137) LOG(INFO) Loaded 108000000 lines\nKilled',
    ],
    ['a datasets map with num_proc', 'Map (num_proc=64):  37%|███▋      | 3700000/10000000 [05:12<08:50]\nKilled'],
    ['tokenising the corpus', 'Running tokenizer on dataset:  61%|██████    | 610000/1000000\nKilled'],
  ])('%s: killed while the data was prepared', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(first(d)).toMatch(/while it loaded or prepared its data/);
    expect(first(d)).toMatch(/streaming=True|mmap_mode/);
  });
  it('the real threads: a 23.5 GB array made one tensor (2114), and sentencepiece (2115)', async () => {
    expect(first(await firstOfCase('static5', '2114'))).toMatch(/experiment that decides/);
    expect(first(await firstOfCase('static5', '2115'))).toMatch(/while it loaded or prepared its data/);
  });
});

describe("DDP's reducer errors are their own diagnosis, with the framework's switch for each", () => {
  const unused =
    'RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`';
  const twice =
    'RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function.\nParameter at index 12 with name encoder.layers.3.attn.qkv.weight has been marked as ready twice.';
  it.each([
    ['the bare message', unused],
    ['under [rank1]: prefixes', unused.replace('RuntimeError', '[rank1]: RuntimeError')],
    ['after a Lightning traceback', `  File "lightning/pytorch/loops/fit_loop.py", line 200, in run\n    self.advance()\n${unused}`],
  ])('unused parameters, %s: find_unused_parameters=True or fix the branch', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d?.rule).toBe('ddp-unused-parameters');
    expect(d?.category).toBe('nccl_or_distributed');
    expect(first(d)).toMatch(/find_unused_parameters=True/);
    expect(first(d)).toMatch(/TORCH_DISTRIBUTED_DEBUG=DETAIL/);
    expect(noBatchChange(d)).toBe(true);
  });
  it('marked ready twice: non-reentrant checkpointing or static_graph', async () => {
    const d = await diagnoseText(twice);
    expect(first(d)).toMatch(/use_reentrant=False/);
    expect(first(d)).toMatch(/static_graph=True/);
  });
  it('find_unused_parameters already on and the run hangs: find which parameters, not the switch again', async () => {
    const d = await diagnoseText(`find_unused_parameters = True\n${unused}`);
    expect(first(d)).toMatch(/already on/);
  });
  it('the real threads: mmdetection with the flag set (2110), QLoRA marked twice (2113)', async () => {
    expect(first(await firstOfCase('static5', '2110'))).toMatch(/already on/);
    expect(first(await firstOfCase('static5', '2113'))).toMatch(/use_reentrant/);
  });
  it('a config that only sets the flag, with a different error, is not this diagnosis', async () => {
    const d = await diagnoseText('torchrun train.py --ddp_find_unused_parameters true\nKeyError: input_ids');
    expect(d?.rule).not.toBe('ddp-unused-parameters');
  });
});

describe('the Chinese reply keeps the arithmetic and the levers', () => {
  it('batch 1 under ZeRO-2 in zh (the engine in process, as the chat adapters call it)', async () => {
    const [{ loadRuleBase }, { diagnose }] = await Promise.all([import('../../src/diagnose/rule-base.js'), import('../../src/diagnose/diagnose.js')]);
    const text =
      'deepspeed --num_gpus 4 train.py --model_name_or_path baichuan-13b --per_device_train_batch_size 1 --deepspeed ds_config_zero2.json\n4 张 A100 80G\nloss.backward()\n显存不足 CUDA out of memory';
    const d = diagnose(text, await loadRuleBase(), 'zh').diagnoses[0];
    expect(d.fixes[0].summary).toMatch(/ZeRO-3/);
    expect(d.fixes[0].summary).toMatch(/4 张 GPU/);
  });
});
