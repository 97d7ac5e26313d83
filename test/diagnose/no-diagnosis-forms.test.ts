// Issue 23, pastes that got no diagnosis at all: another holder of the card and host-RAM kills told in fixed formats
// nothing read. Each principle with real logs from test/fixtures/untuned/holder9 (public threads, URLs in its
// cases.json) and synthetic variants written from the principle (marked "synthetic": invented here in the
// framework's fixed format, not copied from a thread). In process (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const summary = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';
// The reply's first fix leads with the holder (not the batch experiment, whose text also mentions another process).
const FREES = /^Another process holds/;
const RAM = /RAM|swap|page file/i;

describe('cudaErrorDevicesUnavailable (error 46, "busy or unavailable"): the device refused a context; another process holds it', () => {
  it.each(['4100', '4101', '4102', '4103', '4104', '4105', '4122'])('real holder9/%s', async (n) => {
    const d = await firstOfCase('holder9', n);
    expect(d?.rule).toBe('cuda-devices-busy');
    expect(d?.category).toBe('driver_or_smi');
    expect(summary(d)).toMatch(FREES);
    expect(summary(d)).toMatch(/compute.mode/i);
  });

  // synthetic: the runtime error in each version's fixed text
  const forms: Record<string, string> = {
    'PyTorch 1.x+ at model.cuda()':
      'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    model.cuda()\nRuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable',
    'PyTorch 2.x AcceleratorError':
      "torch.AcceleratorError: CUDA error: all CUDA-capable devices are busy or unavailable\nSearch for `cudaErrorDevicesUnavailable' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.",
    'CUDA 12 wording':
      'RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.',
    'THC error 46': 'THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=47 error=46 : all CUDA-capable devices are busy or unavailable',
    'Caffe check': 'F0101 12:00:00.000 1234 common.cpp:152] Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable',
    'driver API name': 'pycuda._driver.LogicError: cuCtxCreate failed: CUDA_ERROR_DEVICE_UNAVAILABLE',
  };
  it.each(Object.entries(forms))('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('cuda-devices-busy');
    expect(summary(d)).toMatch(FREES);
  });

  it('real holder9/4121 (confuser): on Windows (WDDM, no exclusive mode) the same error is the driver, not another process', async () => {
    const d = await firstOfCase('holder9', '4121');
    expect(d?.category).toBe('driver_or_smi');
    expect(summary(d)).toMatch(/driver/);
    expect(summary(d)).not.toMatch(FREES);
  });

  it('synthetic: a Windows paste of the same error gets the driver first', async () => {
    const text =
      'File "C:\\Users\\me\\sd\\venv\\lib\\site-packages\\torch\\nn\\modules\\module.py", line 987, in convert\nRuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable';
    expect(summary(await diagnosePaste(text))).toMatch(/driver/);
  });

  it('synthetic: CUDA unknown error is still the initialisation rule (busy is not its advice)', async () => {
    const d = await diagnosePaste(
      'RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 999: unknown error',
    );
    expect(d?.rule).toBe('cuda-init-failed');
  });
});

describe("CUDA's own out-of-memory while the model is still being built: the card was full before this job", () => {
  it('real holder9/4106: nn.Conv2d __init__ under build_ssd frees or moves off the card', async () => {
    const d = await firstOfCase('holder9', '4106');
    expect(d?.category).toBe('cuda_oom');
    expect(summary(d)).toMatch(FREES);
    expect(summary(d)).not.toMatch(/\bbatch\b/);
  });

  // synthetic: a torch.nn layer's constructor or reset_parameters is the innermost frame
  const layers: Record<string, string> = {
    'Linear __init__':
      'Traceback (most recent call last):\n  File "net.py", line 12, in __init__\n    self.fc = nn.Linear(4096, 4096)\n  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 98, in __init__\n    self.weight = Parameter(torch.empty((out_features, in_features), **factory_kwargs))\nRuntimeError: CUDA error: out of memory',
    'Embedding reset_parameters':
      'Traceback (most recent call last):\n  File "model.py", line 30, in __init__\n    self.emb = nn.Embedding(50000, 1024)\n  File "/usr/lib/python3/dist-packages/torch/nn/modules/sparse.py", line 143, in __init__\n    self.reset_parameters()\n  File "/usr/lib/python3/dist-packages/torch/nn/modules/sparse.py", line 152, in reset_parameters\n    init.normal_(self.weight)\nRuntimeError: CUDA error: out of memory',
  };
  it.each(Object.entries(layers))('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('cuda_oom');
    expect(summary(d)).toMatch(FREES);
  });

  it('synthetic: a layer forward (a batch exists) is not read as the build', async () => {
    const text =
      'Traceback (most recent call last):\n  File "train.py", line 80, in <module>\n    out = model(x)\n  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py", line 463, in forward\n    return self._conv_forward(input, self.weight, self.bias)\nRuntimeError: CUDA error: out of memory';
    expect(summary(await diagnosePaste(text))).not.toMatch(/^Another process holds/);
  });
});

describe('a report that another holder was on the card first ("already a training in GPU 0")', () => {
  it('real holder9/4109: CUDA_VISIBLE_DEVICES=1 yet GPU 0, which another training fills', async () => {
    const d = await firstOfCase('holder9', '4109');
    expect(summary(d)).toMatch(FREES);
  });
  // synthetic
  it.each([
    'RuntimeError: CUDA out of memory.\nThere is already a training job running on GPU 0, I use the second card.',
    'RuntimeError: CUDA out of memory.\nalready another experiment in cuda:0 when I start this one',
  ])('synthetic: %s', async (text) => {
    expect(summary(await diagnosePaste(text))).toMatch(FREES);
  });
  it('synthetic: "already" about this run itself names no holder', async () => {
    const text = 'RuntimeError: CUDA out of memory.\nI already reduced the batch size to 4 on GPU 0.';
    expect(summary(await diagnosePaste(text))).not.toMatch(/^Another process holds/);
  });
});

describe("host-RAM kills in a notebook's, Ollama's and Windows' words", () => {
  it.each(['4110', '4111', '4112', '4113', '4116', '4120', '4127', '4128', '4129'])('real holder9/%s is host RAM', async (n) => {
    const d = await firstOfCase('holder9', n);
    expect(d?.category).toBe('host_oom_killed');
    expect(summary(d)).toMatch(RAM);
  });

  it.each(['4114', '4115', '4117', '4118', '4119'])("real holder9/%s: PyTorch's Windows wording (not enough memory) is the commit limit", async (n) => {
    const d = await firstOfCase('holder9', n);
    expect(d?.rule).toBe('windows-pagefile-too-small');
    expect(summary(d)).toMatch(/page file/);
  });

  // synthetic
  const forms: Record<string, string> = {
    'Jupyter after loading':
      'Loading checkpoint shards:  50%|█████     | 1/2 [00:20<00:20, 20.1s/it]\nThe kernel appears to have died. It will restart automatically.',
    'Ollama CLI': 'ollama run qwen2.5:72b\nError: llama runner process has terminated: signal: killed',
    'Ollama server log':
      'time=2025-03-01T10:00:00.000Z level=ERROR source=sched.go:455 msg="error loading llama server" error="llama runner process has terminated: signal: killed"',
    'POSIX CPU allocator':
      "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: can't allocate memory: you tried to allocate 21474836480 bytes. Error code 12 (Cannot allocate memory)",
  };
  it.each(Object.entries(forms))('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(summary(d)).toMatch(RAM);
  });

  it('synthetic: the Windows CPU allocator wording names the page file; the POSIX one does not', async () => {
    const win =
      'RuntimeError: [enforce fail at ..\\c10\\core\\impl\\alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate 52428800 bytes.';
    expect((await diagnosePaste(win))?.rule).toBe('windows-pagefile-too-small');
    const posix =
      "RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 52428800 bytes. Error code 12 (Cannot allocate memory)";
    expect((await diagnosePaste(posix))?.rule).not.toBe('windows-pagefile-too-small');
  });
});

describe("NCCL's start-up notices of skipped transports never outrank the failure in the same paste", () => {
  const oom =
    'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.10 GiB is free. Of the allocated memory 20.50 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.';
  // synthetic
  it.each([
    'node1:123:456 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]',
    'node1:123:456 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v6 symbol.\nnode1:123:456 [0] NCCL WARN NET/Plugin : Plugin load returned 2 : libnccl-net.so: cannot open shared object file',
  ])('synthetic: %s before an OOM', async (warn) => {
    expect((await diagnosePaste(`${warn}\n${oom}`))?.category).toBe('cuda_oom');
  });
  it('synthetic: another NCCL WARN still reads as the collective failing', async () => {
    const d = await diagnosePaste('node1:123:456 [1] NCCL WARN Connection closed by remote peer 10.0.0.2<51234>');
    expect(d?.category).toBe('nccl_or_distributed');
  });
});

describe("a CUDA context that could not be created, in each stack's words: the card was full before the job began", () => {
  it.each(['4123', '4124'])('real holder9/%s frees or moves off the card', async (n) => {
    const d = await firstOfCase('holder9', n);
    expect(d?.category).toBe('cuda_oom');
    expect(summary(d)).toMatch(FREES);
    expect(summary(d)).not.toMatch(/\bbatch\b/);
  });
  // synthetic: each stack's fixed text of a failed context creation
  it.each([
    'tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization on GPU:1 failed. Status: out of memory',
    'THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=51 error=2 : out of memory\nRuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCGeneral.cpp:51',
    'THCudaCheck FAIL file=/home/user/torch/extra/cutorch/init.c line=734 error=2 : out of memory',
  ])('synthetic: %s', async (text) => {
    expect(summary(await diagnosePaste(text))).toMatch(FREES);
  });
});

describe("a pasted nvidia-smi or gpustat snapshot with the run's card nearly full, beside CUDA's own OOM: others hold it", () => {
  const row = (gpu: number, used: number, total: number) =>
    `|   ${gpu}  Tesla V100-SXM2...  On   | 00000000:00:0${gpu + 8}.0 Off |                    0 |\n| N/A   40C    P0    60W / 300W |  ${used}MiB / ${total}MiB |     50%      Default |`;
  // synthetic: nvidia-smi tables and gpustat lines
  it('synthetic: GPU 0 full in nvidia-smi, error without figures', async () => {
    const text = `${row(0, 15514, 16130)}\n${row(1, 0, 16130)}\nRuntimeError: CUDA error: out of memory`;
    expect(summary(await diagnosePaste(text))).toMatch(FREES);
  });
  it('synthetic: gpustat, GPU 0 full', async () => {
    const text =
      "[0] Tesla V100-SXM2-16GB | 44'C,  98 % | 15900 / 16130 MB | alice(15890M)\n[1] Tesla V100-SXM2-16GB | 40'C,   0 % |     0 / 16130 MB |\nRuntimeError: CUDA error: out of memory";
    expect(summary(await diagnosePaste(text))).toMatch(FREES);
  });
  it("synthetic: the run's card half empty in the snapshot is no evidence of another holder", async () => {
    const text = `${row(0, 6000, 16130)}\nRuntimeError: CUDA error: out of memory`;
    expect(summary(await diagnosePaste(text))).not.toMatch(/^Another process holds/);
  });
  it("synthetic: PyTorch's own figures decide over a snapshot (this process holds the card)", async () => {
    const text = `${row(0, 15900, 16130)}\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 15.77 GiB of which 200.00 MiB is free. Of the allocated memory 14.90 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.`;
    expect(summary(await diagnosePaste(text))).not.toMatch(/^Another process holds/);
  });
  it('synthetic: TensorFlow created its device with a few hundred MB of a 24 GB card', async () => {
    const text =
      '2023-01-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1510] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 210 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6\n2023-01-01 10:00:01.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 64.00MiB (rounded to 67108864)requested by op Conv2D';
    expect(summary(await diagnosePaste(text))).toMatch(FREES);
  });
  it('synthetic: TensorFlow created its device with most of the card: no other holder from that line', async () => {
    const text =
      '2023-01-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1510] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 22282 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6\n2023-01-01 10:00:01.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 64.00MiB (rounded to 67108864)requested by op Conv2D';
    expect(summary(await diagnosePaste(text))).not.toMatch(/^Another process holds/);
  });
});
