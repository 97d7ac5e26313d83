// A traceback cut just below the frame that calls the model loader (src/diagnose/phase.ts, LOAD_CALL_CODE): the
// innermost frame pasted prints its source line, and where that line calls a loader by its API name (LLaMA-Factory's
// load_model, transformers' from_pretrained, accelerate's load_checkpoint_and_dispatch / dispatch_model), the run was
// loading the model: no batch had run, so the weights' levers come first (issue 23: the phase decides the lever).
// Real: blind9/5757 (a read split, https://github.com/hiyouga/LlamaFactory/issues/9510); the others are synthetic
// variants written from the traceback format, with and without the [rankN]: prefix.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TEST_TIMEOUT = 180_000;
const oom =
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 61.06 MiB is free. Including non-PyTorch memory, this process has 23.58 GiB memory in use. Of the allocated memory 23.21 GiB is allocated by PyTorch, and 130.50 MiB is reserved by PyTorch but unallocated.';
const trace = (prefix: string, fn: string, code: string) =>
  `${prefix}Traceback (most recent call last):\n${prefix}  File "/work/train.py", line 88, in <module>\n${prefix}    main()\n${prefix}  File "/work/train.py", line 41, in ${fn}\n${prefix}    ${code}\n${oom}`;
const first = async (paste: string) => (await diagnosePaste(paste))?.fixes[0]?.summary ?? '';

describe("the innermost frame's source line calls a model loader: the load phase", () => {
  it(
    "real: blind9/5757 (LLaMA-Factory's run_sft cut at model = load_model(...), ZeRO-3 LoRA of a 671B model)",
    async () => {
      const d = await firstOfCase('blind9', '5757');
      expect(d?.facts.phase).toBe('load');
      expect(d?.fixes[0].summary).toMatch(/^The weights are what fills the card: the allocation failed while the model was being loaded.*quantized/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: load_model / from_pretrained / load_checkpoint_and_dispatch lines, with and without [rankN]:',
    async () => {
      for (const [prefix, code] of [
        ['', 'model = load_model(tokenizer, model_args, finetuning_args, training_args.do_train)'],
        ['[rank3]: ', 'model = AutoModelForCausalLM.from_pretrained(args.model, device_map={"": local_rank})'],
        ['', 'self.model = load_checkpoint_and_dispatch(model, ckpt, device_map="auto")'],
      ]) {
        expect((await diagnosePaste(trace(prefix, 'main', code)))?.facts.phase).toBe('load');
        expect(await first(trace(prefix, 'main', code))).not.toMatch(/(?:halve|lower|reduce|smaller)[^.]{0,30}\bbatch/i);
      }
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: a forward or an evaluation call on that line is not a load',
    async () => {
      expect((await diagnosePaste(trace('', 'train', 'outputs = model(**batch)')))?.facts.phase).not.toBe('load');
      expect((await diagnosePaste(trace('', 'main', 'metrics = trainer.evaluate()')))?.facts.phase).toBe('eval');
    },
    TEST_TIMEOUT,
  );
});
