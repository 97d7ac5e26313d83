// The newest message formats (issue 23 item 6), through the CLI: PyTorch 2.10/2.11's
// torch.AcceleratorError, [rankN]: prefixes on every traceback line, the DataLoader's
// "unable to allocate shared memory(shm) for file" (PyTorch >= 2.9, posix_fallocate), NCCL's
// "Duplicate GPU detected" (ranks on one GPU, not a network problem), and PYTORCH_ALLOC_CONF, the new
// name of PYTORCH_CUDA_ALLOC_CONF. Real logs are in test/fixtures/phase-levers (sources in its README);
// the synthetic variants follow each framework's own format string.
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseFile, type CaseDiagnosis, diagnosePaste } from './corpus-case.js';

const REAL = resolve(import.meta.dirname, '../fixtures/phase-levers');
// Each paste goes to the CLI's own entry on stdin, in process (corpus-case.ts).
const diagnoseText = diagnosePaste;
const real = async (name: string) => (await diagnoseFile(join(REAL, name)))!;
const SITE = '/usr/local/lib/python3.12/dist-packages';

describe('torch.AcceleratorError (PyTorch 2.10/2.11)', () => {
  it.each([
    ['real: deepbeepmeep/Wan2GP#1083', 'wan2gp-1083-accelerator-error.log'],
    ['real: Comfy-Org/ComfyUI#13210', 'comfyui-13210-accelerator-error.log'],
  ])('%s: a CUDA OOM, and no batch halved first', async (_name, file) => {
    const d = await real(file);
    expect(d.category).toBe('cuda_oom');
    expect(d.fixes[0].changes.batch).toBeUndefined();
  });

  it('under [rank0]: prefixes in a training step: a CUDA OOM', async () => {
    const d = await diagnoseText(
      [
        'Traceback (most recent call last):',
        '  File "/workspace/train.py", line 88, in <module>',
        '    loss.backward()',
        `  File "${SITE}/torch/_tensor.py", line 647, in backward`,
        '    torch.autograd.backward(',
        'torch.AcceleratorError: CUDA error: out of memory',
        "Search for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.",
      ]
        .map((l) => `[rank0]: ${l}`)
        .join('\n'),
    );
    expect(d?.category).toBe('cuda_oom');
    expect(d?.facts.phase).toBe('backward');
  });

  it('an AcceleratorError that is not memory (an illegal address) is not called an OOM', async () => {
    const d = await diagnoseText(
      [
        '[rank1]: Traceback (most recent call last):',
        '[rank1]:   File "/workspace/train.py", line 88, in <module>',
        '[rank1]:     out = model(x)',
        '[rank1]: torch.AcceleratorError: CUDA error: an illegal memory access was encountered',
      ].join('\n'),
    );
    expect(d?.category).not.toBe('cuda_oom');
  });
});

describe('DataLoader shared memory in a container: "unable to allocate shared memory(shm) for file"', () => {
  const worker = (reason: string, prefix = '') =>
    [
      'Traceback (most recent call last):',
      '  File "/workspace/train.py", line 140, in <module>',
      '    for images, labels in loader:',
      `  File "${SITE}/torch/utils/data/dataloader.py", line 733, in __next__`,
      '    data = self._next_data()',
      `  File "${SITE}/torch/utils/data/dataloader.py", line 1515, in _next_data`,
      '    return self._process_data(data, worker_id)',
      `  File "${SITE}/torch/_utils.py", line 750, in reraise`,
      '    raise exception',
      'RuntimeError: Caught RuntimeError in DataLoader worker process 3.',
      'Original Traceback (most recent call last):',
      `  File "${SITE}/torch/utils/data/_utils/collate.py", line 212, in collate_tensor_fn`,
      '    storage = elem._typed_storage()._new_shared(numel, device=elem.device)',
      `RuntimeError: unable to allocate shared memory(shm) for file </torch_2783_1437702594_1>: ${reason}`,
    ]
      .map((l) => prefix + l)
      .join('\n');
  it.each([
    ['Resource temporarily unavailable (11)', ''],
    ['No space left on device (28)', ''],
    ['Success (0)', '[rank0]: '],
  ])('%s %s', async (reason, prefix) => {
    const d = await diagnoseText(worker(reason, prefix));
    expect(d?.category).toBe('shm_exhausted');
    expect(JSON.stringify(d?.fixes[0])).toMatch(/--shm-size|--ipc=host/);
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });
});

describe('NCCL "Duplicate GPU detected": ranks on one GPU, not the network', () => {
  const expectRanksOnOneGpu = (d: CaseDiagnosis | undefined) => {
    expect(d?.category).toBe('nccl_or_distributed');
    expect(d?.rule).toBe('nccl-duplicate-gpu');
    expect(d?.fixes[0].summary).toMatch(/LOCAL_RANK/);
    expect(d?.fixes[0].summary).not.toMatch(/^Rerun with NCCL_DEBUG|NCCL_SOCKET_IFNAME to/);
  };
  it.each([
    ['real: NVIDIA/Megatron-LM#661 (barrier)', 'megatron-661-duplicate-gpu.log'],
    ['real: csguoh/MambaIR#39 (DDP __init__)', 'mambair-39-duplicate-gpu-ddp-init.log'],
    ['real: horovod/horovod#3929 (NCCL WARN lines under MPI tags)', 'horovod-3929-duplicate-gpu-mpi-tags.log'],
  ])('%s', async (_name, file) => {
    expectRanksOnOneGpu(await real(file));
  });

  it('NCCL 2.28 under torchrun [rankN]: prefixes, with [rank1]:[W...] warnings', async () => {
    const rank = (r: number) =>
      [
        `[rank${r}]:[W1128 04:51:07.312418 ProcessGroupNCCL.cpp:5023] [PG ID 0 PG GUID 0 Rank ${r}]  using GPU 0 as device used by this process is currently unknown.`,
        `[rank${r}]: Traceback (most recent call last):`,
        `[rank${r}]:   File "/workspace/ddp.py", line 31, in <module>`,
        `[rank${r}]:     model = DDP(model)`,
        `[rank${r}]:   File "${SITE}/torch/nn/parallel/distributed.py", line 858, in __init__`,
        `[rank${r}]:     _verify_param_shape_across_processes(self.process_group, parameters)`,
        `[rank${r}]:   File "${SITE}/torch/distributed/utils.py", line 288, in _verify_param_shape_across_processes`,
        `[rank${r}]:     return dist._verify_params_across_processes(process_group, tensors, logger)`,
        `[rank${r}]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.28.3`,
        `[rank${r}]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.`,
        `[rank${r}]: Last error:`,
        `[rank${r}]: Duplicate GPU detected : rank ${r} and rank ${1 - r} both on CUDA device 1d000`,
      ].join('\n');
    expectRanksOnOneGpu(await diagnoseText(rank(0) + '\n' + rank(1)));
  });

  it('a plain NCCL invalid usage without the duplicate line keeps the setup rule', async () => {
    const d = await diagnoseText(
      'torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5\nncclInvalidUsage: This usually reflects invalid usage of NCCL library.',
    );
    expect(d?.category).toBe('nccl_or_distributed');
    expect(d?.rule).not.toBe('nccl-duplicate-gpu');
  });
});

describe('PYTORCH_ALLOC_CONF: both names read, the advice names the one the torch version honours', () => {
  const fragmented =
    'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.54 GiB memory in use. Of the allocated memory 16.20 GiB is allocated by PyTorch, and 5.90 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.';
  const envOf = async (text: string) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('fragmentation');
    return d!.fixes[0];
  };
  it('torch 2.11 (collect_env): PYTORCH_ALLOC_CONF', async () => {
    expect((await envOf('PyTorch version: 2.11.0+cu128\n' + fragmented)).env).toEqual({ PYTORCH_ALLOC_CONF: 'expandable_segments:True' });
  });
  it('torch 2.9.1 (pip): the alias, which 2.9 honours for CUDA', async () => {
    expect((await envOf('torch==2.9.1\n' + fragmented)).env).toEqual({ PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' });
  });
  it('no version stated: the alias, which every version honours', async () => {
    expect((await envOf(fragmented)).env).toEqual({ PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' });
  });
  it.each([
    ['the new name', 'PYTORCH_ALLOC_CONF=expandable_segments:True torchrun --nproc_per_node 8 train.py'],
    ['the old name, in Python', 'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"'],
  ])('already set under %s: not advised again', async (_name, line) => {
    const fix = await envOf(line + '\n' + fragmented);
    expect(fix.env).toBeUndefined();
    expect(fix.summary).toMatch(/already on/);
  });
});
