// "Who holds the memory" agrees with the stack the paste is from (issue 23 items 4 and 7; src/diagnose/holder-unstated.ts):
// it names the figures that stack printed (TensorFlow's BFC Stats, llama.cpp's buffers and memory breakdown, vLLM's KV
// figures, MLX's request), and when there are none says what that stack prints and which tool shows that device's
// memory; a PyTorch instruction or nvidia-smi appears only where the stack and the card have them. Real logs from the
// readable groups beside synthetic variants written from each stack's message format (marked synthetic).
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseOutput } from './corpus-case.js';

const ROOT = resolve(import.meta.dirname, '../fixtures/untuned');
const logOf = (group: string, n: string) => {
  const file = readdirSync(resolve(ROOT, group)).find((f) => f.startsWith(`${n}-`))!;
  return readFileSync(resolve(ROOT, group, file), 'utf8');
};
/** The "Who holds the memory" section of the text reply (its heading and text). */
async function holder(paste: string, locale: 'en' | 'zh' = 'en'): Promise<string> {
  const reply = await diagnoseOutput(['-'], { paste, locale });
  const heading = locale === 'zh' ? '谁占着内存' : 'Who holds the memory';
  const at = reply.indexOf(heading);
  expect(at, reply).toBeGreaterThanOrEqual(0);
  return reply.slice(at).split('\n').slice(0, 2).join('\n');
}
const PYTORCH_ONLY = /PyTorch prints|\(allocated, reserved, free\)|torch\.cuda/;
const NVIDIA_TOOL = /watch `nvidia-smi`/;

describe('who holds the memory names the figures the stack printed', () => {
  it('TensorFlow: the BFC Stats block (Limit, InUse, MaxInUse), real (blind/1065)', async () => {
    const h = await holder(logOf('blind', '1065'));
    expect(h).toMatch(/TensorFlow's own figures \(Limit 9\.86 GiB, InUse 9\.83 GiB, MaxInUse 9\.83 GiB\)/);
    expect(h).not.toMatch(/no memory figures|PyTorch prints/);
  });
  it("TensorFlow: the Stats lines behind TF's log prefix are read, and decide the holder (synthetic)", async () => {
    const p = (n: string) => `2024-03-01 10:00:00.000000: I tensorflow/core/common_runtime/bfc_allocator.cc:1101] ${n}`;
    const paste = [
      '2024-03-01 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.00GiB (rounded to 2147483648)requested by op MatMul',
      p('Limit:                 15717171200'),
      p('InUse:                 14000000000'),
      p('MaxInUse:              14500000000'),
      'tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[8192,65536] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc',
    ].join('\n');
    expect(await holder(paste)).toMatch(/GPU_0_bfc holds 13\.04 GiB of its 14\.64 GiB limit/);
  });
  it('llama.cpp: the buffers it placed (real, blind6/3890) and its memory breakdown table (real, blind9/5785)', async () => {
    expect(await holder(logOf('blind6', '3890'))).toMatch(/llama\.cpp's own figures \(CUDA0 KV buffer 2048\.00 MiB, CUDA0 compute buffer 296\.02 MiB\)/);
    const h = await holder(logOf('blind9', '5785'));
    expect(h).toMatch(/CUDA0 total 11165 MiB, free 8702, self 10001 \(model 9814, context 134, compute 51\)/);
    expect(h).not.toMatch(PYTORCH_ONLY);
  });
  it('vLLM: the max seq len against the tokens the KV cache holds, real (unseen/1133) and synthetic', async () => {
    expect(await holder(logOf('unseen', '1133'))).toMatch(/"max seq len \(163840\)", "maximum number of tokens that can be stored in KV cache \(13360\)"/);
    const synthetic =
      "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (9072). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
    const h = await holder(synthetic);
    expect(h).toMatch(/max seq len \(32768\).*KV cache \(9072\)/);
    expect(h).not.toMatch(/no memory figures/);
  });
  it("vLLM's start-up check: what was free of the card at its start, real (blind9/5772, servecat11/6104) and synthetic", async () => {
    expect(await holder(logOf('blind9', '5772'))).toMatch(/Other processes: only 22\.76 GiB of 24\.00 GiB was free when the process started: about 1\.24 GiB/);
    expect(await holder(logOf('servecat11', '6104'))).toMatch(/only 19\.77 GiB of 22\.05 GiB was free/);
    for (const device of ['', 'cuda:1 ']) {
      const synthetic = `ValueError: Free memory on device ${device}(4.10/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.`;
      const h = await holder(synthetic);
      expect(h, device).toMatch(/only 4\.10 GiB of 79\.19 GiB was free/);
      expect(h, device).not.toMatch(/no memory figures/);
    }
  });
  it('MLX: the request its allocator printed, real (stacks12/6459) and synthetic [metal::malloc]', async () => {
    expect(await holder(logOf('stacks12', '6459'))).toMatch(/MLX's own figures \(request 9\.00 GiB\)/);
    const synthetic =
      'RuntimeError: [metal::malloc] Attempting to allocate 21474836480 bytes which is greater than the maximum allowed buffer size of 17179869184 bytes.';
    expect(await holder(synthetic)).toMatch(/request 20\.00 GiB/);
  });
});

describe('with no figures, the stack says what it prints and the device its tool; nvidia-smi only for NVIDIA', () => {
  it('MLX and PyTorch MPS on a Mac: Activity Monitor, no nvidia-smi, no PyTorch instruction for MLX (real)', async () => {
    for (const [g, n] of [
      ['stacks12', '6459'],
      ['recog11', '5953'],
    ]) {
      const h = await holder(logOf(g, n));
      expect(h).toMatch(/Activity Monitor/);
      expect(h).not.toMatch(NVIDIA_TOOL);
      expect(h).not.toMatch(PYTORCH_ONLY);
    }
    const mps = await holder(logOf('recog6', '2201'));
    expect(mps).toMatch(/MPS backend prints MPS allocated, other allocations and max allowed.*Activity Monitor/);
    expect(mps).not.toMatch(NVIDIA_TOOL);
  });
  it('Ascend (real, blind9/5777) and Sophon (real, blind9/5780): their own tools', async () => {
    const npu = await holder(logOf('blind9', '5777'));
    expect(npu).toMatch(/npu-smi info/);
    expect(npu).not.toMatch(NVIDIA_TOOL);
    const sophon = await holder(logOf('blind9', '5780'));
    expect(sophon).toMatch(/bm-smi/);
    expect(sophon).not.toMatch(NVIDIA_TOOL);
  });
  it('MindSpore (real, stacks8/3723): npu-smi or nvidia-smi, no PyTorch instruction', async () => {
    const h = await holder(logOf('stacks8', '3723'));
    expect(h).toMatch(/npu-smi info.*\(Ascend\) or `nvidia-smi` \(NVIDIA GPU\)/);
    expect(h).not.toMatch(PYTORCH_ONLY);
  });
  it('ROCm: rocm-smi for PyTorch\'s "HIP error: out of memory" (synthetic)', async () => {
    const synthetic = [
      'Traceback (most recent call last):',
      '  File "train.py", line 12, in <module>',
      '    x = torch.randn(8192, 8192, device="cuda")',
      'RuntimeError: HIP error: out of memory',
      'HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.',
    ].join('\n');
    const h = await holder(synthetic);
    expect(h).toMatch(/rocm-smi/);
    expect(h).not.toMatch(NVIDIA_TOOL);
  });
  it('non-PyTorch stacks on NVIDIA cards keep nvidia-smi but drop "PyTorch prints them" (real: TF, JAX, MXNet, Caffe, TensorRT, Ollama)', async () => {
    for (const [g, n, prints] of [
      ['blind6', '3839', /TensorFlow logs under the error \(its allocator's Stats/],
      ['blind9', '5776', /XLA's memory report/],
      ['stacks8', '3702', null],
      ['blind7', '3985', null],
      ['stacks8', '3721', null],
      ['input10', '5413', /llama\.cpp prints each device's model, KV and compute buffer sizes/],
    ] as const) {
      const h = await holder(logOf(g, n));
      expect(h, `${g}/${n}`).not.toMatch(PYTORCH_ONLY);
      expect(h, `${g}/${n}`).toMatch(NVIDIA_TOOL);
      if (prints) expect(h, `${g}/${n}`).toMatch(prints);
    }
  });
  it("Ollama's runner error (synthetic): llama.cpp's load log, not PyTorch", async () => {
    const synthetic =
      'Error: llama runner process has terminated: CUDA error: out of memory\n  current device: 0, in function ggml_cuda_pool_malloc at ggml-cuda.cu:350\n  cudaMalloc(&ptr, size)';
    const h = await holder(synthetic);
    expect(h).toMatch(/paste the load log/);
    expect(h).not.toMatch(PYTORCH_ONLY);
  });
  it('PyTorch on an NVIDIA card keeps its text: PyTorch prints them, nvidia-smi (synthetic)', async () => {
    const synthetic =
      'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    y = model(x)\nRuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call';
    const h = await holder(synthetic);
    expect(h).toMatch(/paste the whole error message \(PyTorch prints them\), or watch `nvidia-smi` \/ `\/gpu status` while the job runs/);
  });
  it("Chinese: the same line in zh, with the stack's tool (real Ascend, blind9/5777; real MLX, stacks12/6460)", async () => {
    const npu = await holder(logOf('blind9', '5777'), 'zh');
    expect(npu).toMatch(/npu-smi info.*nvidia-smi 看不到昇腾 NPU/);
    const mlx = await holder(logOf('stacks12', '6460'), 'zh');
    expect(mlx).toMatch(/MLX 自己的数字.*活动监视器/);
    expect(mlx).not.toMatch(/PyTorch 会打印/);
  });
});
