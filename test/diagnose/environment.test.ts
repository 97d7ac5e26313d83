// Advice that holds where the job runs (issue 23 item 4): the environment is read from the paste's fixed
// signals (src/diagnose/environment.ts: Colab's /content and google.colab, Kaggle's /kaggle/working, Windows
// drive paths, .exe and WDDM, WSL's kernel, MPS's and XLA's own messages, the torch version) and the fixes
// follow it: no "stop the other job" on a notebook whose GPU is its own, no expandable_segments where PyTorch
// has none (before 2.1, on Windows), no export on Windows, MPS's watermark, TPU's HBM levers. Through the CLI,
// plus the detector itself on the same signals.
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseFile, type CaseDiagnosis, diagnosePaste } from './corpus-case.js';
import { detectEnvironment, expandableSegmentsAvailable } from '../../src/diagnose/environment.js';

const ROOT = resolve(import.meta.dirname, '../..');
// Each paste goes to the CLI's own entry on stdin, in process (corpus-case.ts).
const diagnoseText = diagnosePaste;
const all = (d: CaseDiagnosis | undefined) => JSON.stringify(d?.fixes ?? []);
const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';

describe('the detector reads fixed signals, not prose', () => {
  it.each([
    ['  File "/content/drive/MyDrive/train.py", line 3', { notebook: 'colab', os: 'linux' }],
    ['/usr/local/lib/python3.10/dist-packages/google/colab/_shell.py', { notebook: 'colab' }],
    ['  File "/kaggle/working/train.py", line 3', { notebook: 'kaggle' }],
    ['  File "C:\\Users\\me\\proj\\train.py", line 3', { os: 'windows' }],
    ['|   0  NVIDIA GeForce RTX 3090  WDDM  | 00000000:01:00.0  On |', { os: 'windows' }],
    ['Linux 5.15.133.1-microsoft-standard-WSL2 x86_64', { os: 'wsl' }],
    ['RuntimeError: MPS backend out of memory (MPS allocated: 1.0 GB, other allocations: 2.0 GB, max allowed: 9.07 GB).', { accelerator: 'mps', os: 'macos' }],
    ['import torch_xla.core.xla_model as xm', { accelerator: 'tpu' }],
    ['RuntimeError: HIP out of memory. Tried to allocate 2.00 GiB', { accelerator: 'rocm' }],
    ['PyTorch version: 1.13.1+cu117', { torch: [1, 13] }],
  ])('%s', (line, expected) => {
    expect(detectEnvironment(line)).toMatchObject(expected);
  });
  it.each([['I ran it on Colab and on my Windows laptop with WSL, TPU next'], ['the content of /contents/ is cached']])(
    'prose or look-alikes say nothing: %s',
    (line) => {
      const env = detectEnvironment(line);
      expect([env.notebook, env.os, env.accelerator]).toEqual([undefined, undefined, undefined]);
    },
  );
  it('expandable segments: from PyTorch 2.1, not on Windows, MPS or TPU', () => {
    expect(expandableSegmentsAvailable(detectEnvironment('torch==2.1.0'))).toBe(true);
    expect(expandableSegmentsAvailable(detectEnvironment('torch==2.0.1'))).toBe(false);
    expect(expandableSegmentsAvailable(detectEnvironment('torch==2.4.0\n  File "D:\\proj\\a.py", line 1'))).toBe(false);
    expect(expandableSegmentsAvailable(detectEnvironment(''))).toBe(true);
  });
});

describe('another process on a hosted notebook is the notebook itself: restart, not kill', () => {
  const oom = (path: string) =>
    [
      'Traceback (most recent call last):',
      `  File "${path}", line 88, in <module>`,
      '    outputs = model(**batch)',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 14.75 GiB of which 1.10 GiB is free. Process 2210 has 9.20 GiB memory in use. Including non-PyTorch memory, this process has 4.40 GiB memory in use. Of the allocated memory 4.02 GiB is allocated by PyTorch, and 100.11 MiB is reserved by PyTorch but unallocated.',
    ].join('\n');
  it.each([
    ['Colab (/content)', '/content/drive/MyDrive/train.py'],
    ['Colab (dist-packages/google/colab)', '/usr/local/lib/python3.10/dist-packages/google/colab/_shell.py'],
    ['Kaggle (/kaggle/working)', '/kaggle/working/train.py'],
  ])('%s', async (_name, path) => {
    const d = await diagnoseText(oom(path));
    expect(d?.facts.holder).toBe('other_processes');
    expect(first(d)).toMatch(/hosted notebook.*Restart session/);
    expect(d?.fixes.map((f) => f.summary).join('\n')).not.toMatch(/stop what is not yours/);
  });
  it('the same OOM on a shared Linux server: free the other process', async () => {
    const d = await diagnoseText(oom('/home/me/train.py'));
    expect(first(d)).toMatch(/Another process holds GPU memory/);
  });
});

describe('fragmentation where expandable_segments does not exist', () => {
  const frag =
    'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity; 16.20 GiB already allocated; 1.10 GiB free; 22.10 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF';
  it.each([
    ['a C:\\ path', '  File "C:\\Users\\me\\project\\train.py", line 40, in <module>'],
    ['a ComfyUI portable path on D:\\', '  File "D:\\ComfyUI_windows_portable\\ComfyUI\\execution.py", line 151, in recursive_execute'],
    ['python.exe on the command line', 'C:\\> python.exe train.py --epochs 10'],
  ])('Windows (%s): max_split_size_mb in cmd and PowerShell syntax, no export', async (_name, line) => {
    const d = await diagnoseText(line + '\n' + frag);
    expect(d?.category).toBe('fragmentation');
    expect(first(d)).toMatch(/not available here \(Windows\).*set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128.*\$env:PYTORCH_CUDA_ALLOC_CONF/);
    expect(all(d)).not.toMatch(/export PYTORCH|expandable_segments:True/);
  });
  it.each([
    ['torch==1.13.1', /PyTorch 1\.13/],
    ['PyTorch version: 2.0.1+cu118', /PyTorch 2\.0/],
  ])('%s: max_split_size_mb, with the version that rules expandable_segments out', async (version, why) => {
    const d = await diagnoseText(version + '\n' + frag);
    expect(first(d)).toMatch(why);
    expect(first(d)).toMatch(/export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128/);
    expect(all(d)).not.toMatch(/expandable_segments:True/);
  });
  it('PyTorch 2.4 on Linux: expandable_segments as before', async () => {
    const d = await diagnoseText('PyTorch version: 2.4.0\n' + frag);
    expect(JSON.stringify(d?.fixes[0])).toMatch(/expandable_segments:True/);
  });
});

describe("Apple MPS and TPU get their own levers, not CUDA's", () => {
  it.each([['real: pytorch/pytorch#152351 (Trainer backward)', 'knowledge/cuda-oom/match/pytorch-152351-mps-backward.log']])(
    '%s: the MPS watermark advice, no CUDA setting',
    async (_name, file) => {
      const d = await diagnoseFile(join(ROOT, file));
      expect(all(d)).toMatch(/torch\.mps\.empty_cache.*PYTORCH_MPS_HIGH_WATERMARK_RATIO/);
      expect(all(d)).not.toMatch(/PYTORCH_CUDA_ALLOC_CONF=|export PYTORCH/);
    },
  );
  it.each([
    [
      'ComfyUI on a Mac',
      'RuntimeError: MPS backend out of memory (MPS allocated: 9.57 GiB, other allocations: 17.35 GiB, max allowed: 27.20 GiB). Tried to allocate 292.50 MiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).',
    ],
    [
      'a shared pool, bytes',
      'MPS backend out of memory (MPS allocated: 1.02 GB, other allocations: 0 bytes, max allowed: 15.87 GB). Tried to allocate 256 bytes on shared pool.',
    ],
  ])('%s', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('cuda_oom');
    expect(all(d)).toMatch(/Apple silicon \(MPS\)/);
  });
  it.each([
    [
      'torch_xla',
      'import torch_xla.core.xla_model as xm\nRuntimeError: Ran out of memory in memory space hbm. Used 21.95G of 15.48G hbm. Exceeded hbm capacity by 6.47G.',
    ],
    ['libtpu', 'I0000 libtpu.so loaded\nRESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 30.21G of 15.48G hbm.'],
  ])("TPU (%s): the HBM report and sharding first; the holder line quotes XLA's total", async (_name, text) => {
    const d = await diagnoseText(text);
    expect(first(d)).toMatch(/^This ran on a TPU/);
    expect(String(d?.facts.holderWhy)).not.toMatch(/gives no memory figures/);
  });
});
