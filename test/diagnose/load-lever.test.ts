// Issue 23, static memory at the load: which lever opens when the weights fill the card while the model is loaded, by
// what the run is. A diffusers pipeline moved whole to the GPU holds every sub-model at once: model CPU offload first. A
// run that trains every parameter, or shards (FSDP / ZeRO-3), moves the whole model onto each rank's GPU before any
// sharding: build it sharded first. Inference keeps quantize first. Also: a commented-out setting (`#load_in_4bit=True`)
// states nothing, and a phase a line says went fine ("模型加载成功") is not the failure's. Real examples: blind6 3835, 3841 and
// static10 5200, 5202, 5204, 5205 (public threads, URLs in their cases.json); every other text is a synthetic variant
// written from the principle. In process (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';
const SHARD = /ZeRO-3|FSDP/;
const OFFLOAD = /enable_model_cpu_offload/;

describe('a load whose weights fill the card opens with the lever of the run it is', () => {
  it('real blind6/3835: Trainer.__init__ moving the model (training) shards at load first', async () => {
    expect(first(await firstOfCase('blind6', '3835'))).toMatch(SHARD);
  });
  it('real static10/5200: .cuda() before apply_fsdp: build it sharded', async () => {
    expect(first(await firstOfCase('static10', '5200'))).toMatch(SHARD);
  });
  it('real static10/5204: a diffusers pipeline moved whole to cuda: model CPU offload', async () => {
    expect(first(await firstOfCase('static10', '5204'))).toMatch(OFFLOAD);
  });

  const frames = (fn: string) =>
    `Traceback (most recent call last):\n  File "run.py", line 10, in <module>\n    ${fn}\n  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1160, in to\n    return self._apply(convert)\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 50.00 MiB (GPU 0; 23.65 GiB total capacity; 23.10 GiB already allocated; 12.00 MiB free; 23.20 GiB reserved in total by PyTorch)`;
  // synthetic: each kind of run failing in the same .to() at load
  it('synthetic: a diffusers pipeline class loaded and moved (any pipeline name in the library form)', async () => {
    for (const cls of ['HunyuanVideoPipeline', 'AutoPipelineForText2Image', 'LTXPipeline']) {
      const d = await diagnosePaste(`pipe = ${cls}.from_pretrained("x", torch_dtype=torch.bfloat16)\n${frames('pipe.to("cuda")')}`);
      expect(first(d)).toMatch(OFFLOAD);
    }
  });
  it('synthetic: a run that names FSDP or ZeRO-3 moving the model before sharding', async () => {
    for (const said of ['model is wrapped with FSDP after this', 'deepspeed config: zero_stage: 3', 'fsdp_config: {"fsdp_sharding_strategy": 1}']) {
      expect(first(await diagnosePaste(`${said}\n${frames('model = model.cuda()')}`))).toMatch(SHARD);
    }
  });
  it('real blind6/3841: FLUX (already FP8) inference filling 24 GB: offload the idle models first', async () => {
    expect(first(await firstOfCase('blind6', '3841'))).toMatch(OFFLOAD);
  });
  it('synthetic: a diffusion family named in an inference run whose process fills the card', async () => {
    const oom =
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 15.70 GiB of which 5.00 MiB is free. Including non-PyTorch memory, this process has 15.60 GiB memory in use.';
    for (const family of ['SDXL', 'Stable Diffusion 3.5', 'HunyuanVideo'])
      expect(first(await diagnosePaste(`python infer.py  # ${family} inference on a 16 GB card\n${oom}`))).toMatch(OFFLOAD);
  });
  it('synthetic control: plain inference keeps quantize first', async () => {
    const d = await diagnosePaste(`python generate.py --prompt hi\n${frames('model = model.cuda()')}`);
    expect(first(d)).toMatch(/quantiz/);
    expect(first(d)).not.toMatch(SHARD);
  });
});

describe('settings that are off and phases that went fine state nothing', () => {
  it('real static10/5202: #load_in_4bit=True commented out: the 13B base is bf16 and 4 bits is the lever', async () => {
    const d = await firstOfCase('static10', '5202');
    expect(d?.facts.dtype).not.toBe('int4');
    expect(first(d)).toMatch(/4.bit|quantiz/);
  });
  it('synthetic: commented-out quantization lines in Python, YAML and shell are not the dtype', async () => {
    for (const line of ['    # load_in_8bit=True,', '# load_in_4bit: true', '  #--load-in-4bit \\']) {
      const d = await diagnosePaste(`${line}\nCUDA out of memory when loading the model llama-7b on an 8 GB card`);
      expect(d?.facts.dtype).toBeUndefined();
    }
  });
  it('real static10/5205: "模型加载成功" then an OOM describing an image is not a load failure', async () => {
    expect((await firstOfCase('static10', '5205'))?.facts.phase).not.toBe('load');
  });
  it('synthetic: the load said to have gone fine, in both languages, is not the phase', async () => {
    for (const text of [
      '进行模型加载，模型加载成功，但是推理的时候显存不足',
      'I do the model loading, the model loaded fine, but then CUDA out of memory when I send a prompt',
    ]) {
      expect((await diagnosePaste(text))?.facts.phase).not.toBe('load');
    }
  });
});
