// Fixed messages of the training libraries above PyTorch (transformers, accelerate, Lightning), read by the format
// string each library prints, not by a thread's wording. Synthetic variants are written from the format strings in the
// libraries' sources; the real cases are tuned threads of libcat11/, labelled before the engine ran on them.
import { describe, expect, it } from 'vitest';
import { type CaseDiagnosis, diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const noBatch = (d: CaseDiagnosis | undefined) => d?.fixes.some((f) => f.changes.batch !== undefined) ?? false;

describe("transformers' bitsandbytes quantizer: modules dispatched to the CPU or disk", () => {
  it.each(['6050', '6053'])('real libcat11/%s', async (n) => {
    const d = await firstOfCase('libcat11', n);
    expect(d?.rule).toBe('quantized-model-dispatched-offload');
    expect(noBatch(d)).toBe(false);
  });

  // synthetic: the 4-bit quantizer's wording (llm_int8_enable_fp32_cpu_offload), the older 8-bit one wrapped over lines
  // by modeling_utils, and the error under a ComfyUI node
  it.each([
    [
      '4-bit',
      'ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the quantized model. If you want to dispatch the model on the CPU or the disk while keeping these modules in 32-bit, you need to set `llm_int8_enable_fp32_cpu_offload=True` and pass a custom `device_map` to `from_pretrained`.',
    ],
    [
      'wrapped',
      'ValueError:\n                        Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit\n                        the quantized model. If you want to dispatch the model on the CPU or the disk while keeping',
    ],
    ['wrapped after disk', 'ValueError:\nSome modules are dispatched on the CPU or the disk.\nMake sure you have enough GPU RAM to fit the quantized model.'],
    [
      'comfyui',
      '!!! Exception during processing !!! Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the quantized model.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('quantized-model-dispatched-offload');
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/nvidia-smi/);
    expect(noBatch(d)).toBe(false);
  });

  it('near miss (synthetic): accelerate offloading by design is not this error', async () => {
    const d = await diagnosePaste('Some parameters are on the meta device because they were offloaded to the cpu.');
    expect(d?.rule).not.toBe('quantized-model-dispatched-offload');
  });
});

describe("accelerate's find_executable_batch_size reached zero", () => {
  it('real libcat11/6055 (Chinese report)', async () => {
    const d = await firstOfCase('libcat11', '6055');
    expect(d?.rule).toBe('accelerate-no-executable-batch-size');
  });

  // synthetic: the message alone, and after the OOM it retried on (the finder's verdict wins over the OOM's numbers)
  it.each([
    ['alone', 'RuntimeError: No executable batch size found, reached zero.'],
    [
      'after an OOM',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 15.77 GiB of which 4.38 MiB is free. Of the allocated memory 14.90 GiB is allocated by PyTorch, and 500.00 MiB is reserved by PyTorch but unallocated.\n\nDuring handling of the above exception, another exception occurred:\n\n  File "/usr/local/lib/python3.10/site-packages/accelerate/utils/memory.py", line 158, in decorator\n    raise RuntimeError("No executable batch size found, reached zero.")\nRuntimeError: No executable batch size found, reached zero.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('accelerate-no-executable-batch-size');
    expect(first(d)).toMatch(/batch is not the lever/);
    expect(noBatch(d)).toBe(false);
  });
});

describe("Lightning's device checks before training", () => {
  it.each(['6056', '6058', '6060'])('real libcat11/%s: no GPU visible', async (n) => {
    expect((await firstOfCase('libcat11', n))?.rule).toBe('lightning-gpus-unavailable');
  });
  it.each(['6061', '6062'])('real libcat11/%s: ids the machine does not show', async (n) => {
    expect((await firstOfCase('libcat11', n))?.rule).toBe('lightning-gpu-ids-not-present');
  });

  // synthetic, from device_parser.py, the accelerator connector and CUDAAccelerator.find_usable_cuda_devices
  it.each([
    ['none', 'lightning_fabric.utilities.exceptions.MisconfigurationException: GPUs requested but none are available.', 'lightning-gpus-unavailable'],
    [
      'old GPUAccelerator',
      'MisconfigurationException: GPUAccelerator can not run on your system since the accelerator is not available.',
      'lightning-gpus-unavailable',
    ],
    ['new gpu list', 'MisconfigurationException: You requested gpu: [0]\n But your machine only has: []', 'lightning-gpus-unavailable'],
    ['find none', 'RuntimeError: You requested to find 2 devices but there are no visible CUDA devices on this machine.', 'lightning-gpus-unavailable'],
    ['find too many', 'RuntimeError: You requested to find 8 devices but this machine only has 4 GPUs.', 'lightning-gpu-ids-not-present'],
    [
      'busy',
      'RuntimeError: You requested to find 2 devices but only 1 are currently available. The devices may be in exclusive mode.',
      'lightning-gpu-ids-not-present',
    ],
    ['index', 'MisconfigurationException: You requested gpu: [2, 3]\n But your machine only has: [0, 1]', 'lightning-gpu-ids-not-present'],
  ])('synthetic: %s', async (_name, text, rule) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe(rule);
    expect(d?.category).toBe('driver_or_smi');
  });

  it('near miss (synthetic): an MPS accelerator on a Mac is not a CUDA install problem', async () => {
    const d = await diagnosePaste('MisconfigurationException: `MPSAccelerator` can not run on your system since the accelerator is not available.');
    expect(d?.rule).not.toBe('lightning-gpus-unavailable');
  });
});

describe('device_map="auto" put weights on disk: the model fits neither the GPU nor the RAM', () => {
  it.each(['6064', '6067', '6069'])('real libcat11/%s', async (n) => {
    const d = await firstOfCase('libcat11', n);
    expect(d?.rule).toBe('model-offloaded-to-disk');
    expect(noBatch(d)).toBe(false);
  });

  // synthetic: transformers' message with quotes instead of backticks, wrapped by rich, and accelerate's dispatch_model one
  it.each([
    ['quotes', "ValueError: The current 'device_map' had weights offloaded to the disk. Please provide an 'offload_folder' for them."],
    [
      'wrapped',
      'ValueError: The current `device_map` had weights offloaded to the disk. Please provide an `offload_folder` for \nthem. Alternatively, make sure you have `safetensors` installed',
    ],
    [
      'dispatch_model',
      'ValueError: We need an `offload_dir` to dispatch this model according to this `device_map`, the following submodules need to be offloaded: model.layers.30, model.layers.31.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('model-offloaded-to-disk');
    expect(first(d)).toMatch(/16-bit dtype/);
  });

  it('near miss (synthetic): offloading that went on is not this error', async () => {
    const d = await diagnosePaste('Some parameters are on the meta device because they were offloaded to the disk and cpu.');
    expect(d?.rule).not.toBe('model-offloaded-to-disk');
  });
});

describe("DeepSpeed ZeRO's own optimizer-state frames", () => {
  // synthetic: stage_1_and_2.py allocates the fp32 gradient partition itself in initialize_optimizer_states, and stage3.py
  // builds its state in _setup_for_real_optimizer: an OOM there is the optimizer state's, not the batch's
  it.each([
    [
      'stage 1/2',
      'Traceback (most recent call last):\n  File "/usr/local/lib/python3.10/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 485, in __init__\n    self.initialize_optimizer_states()\n  File "/usr/local/lib/python3.10/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 611, in initialize_optimizer_states\n    single_grad_partition = torch.zeros(int(self.partition_size[i]),\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.50 GiB. GPU 0 has a total capacity of 79.15 GiB of which 6.20 GiB is free. Of the allocated memory 72.10 GiB is allocated by PyTorch, and 310.00 MiB is reserved by PyTorch but unallocated.',
    ],
    [
      'stage 3',
      '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/stage3.py", line 459, in _setup_for_real_optimizer\n    self.initialize_optimizer_states()\n  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/stage3.py", line 990, in initialize_optimizer_states\n    gradient_buffer = torch.zeros(num_elements, dtype=gradient_dtype, device=self.device)\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.77 GiB. GPU 0 has a total capacity of 39.39 GiB of which 3.05 GiB is free.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/optimizer state/);
    expect(noBatch(d)).toBe(false);
  });

  it('near miss (synthetic): a forward OOM under ZeRO-3 parameter fetching is not the optimizer state', async () => {
    const d = await diagnosePaste(
      '  File "/usr/local/lib/python3.10/site-packages/deepspeed/runtime/zero/partitioned_param_coordinator.py", line 300, in fetch_sub_module\n    self.__all_gather_params(params_to_fetch, forward)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 500.00 MiB is free.',
    );
    expect(first(d)).not.toMatch(/optimizer state does not fit/);
  });
});
