// Each stack prints its failures in its own fixed format and is answered in its own settings, never with PyTorch's
// allocator or training levers (issue 23, item 5): Triton's python backend and Paddle's DataLoader running out of
// /dev/shm, MindSpore's device memory pool, Caffe's glog CUDA check, MXNet's pooled storage manager, TensorRT's builder
// and NCCL's socket layer in the forms older releases printed. Real examples are cases of the tuned group stacks8
// (real public threads, test/fixtures/untuned/stacks8/cases.json); the others are synthetic variants written from each
// format's fixed text (other keys, sizes, devices, paths and surrounding lines), said so in each block's name.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

// The first case compiles the rule base; generous for a shared, loaded CI machine (no timing is asserted).
const TEST_TIMEOUT = 180_000;
const PYTORCH_LEVERS = /expandable_segments|PYTORCH_CUDA_ALLOC_CONF|torch\.|gradient checkpointing|ZeRO|FSDP|LoRA/;

describe("shared memory in each stack's own words: a larger /dev/shm, not GPU memory", () => {
  it.each([
    ['stacks8', '3708', 'triton-python-backend-shm'],
    ['stacks8', '3709', 'triton-python-backend-shm'],
    ['stacks8', '3710', 'triton-python-backend-shm'],
    ['stacks8', '3707', 'paddle-shm-mmap'],
  ])(
    'real: %s/%s',
    async (group, n, rule) => {
      const d = await firstOfCase(group, n);
      expect(d).toMatchObject({ rule, category: 'shm_exhausted' });
      expect(d!.fixes[0].summary).toMatch(/--shm-size/);
      expect(d!.fixes[0].summary).not.toMatch(/\bbatch\b[^.]{0,20}(?:halve|reduce)/i);
    },
    TEST_TIMEOUT,
  );

  it.each([
    // synthetic: another region, size and the server's own log prefix
    "E0312 08:01:02.123456 1 model_lifecycle.cc:638] failed to load 'ensemble_pre' version 1: Internal: Unable to initialize shared memory key 'triton_python_backend_shm_region_12' to requested size (1073741824 bytes). If you are running Triton inside docker, use '--shm-size' flag to control the shared memory region size. Error: No space left on device",
    // synthetic: the pool growing during inference, through tritonclient
    "tritonclient.utils.InferenceServerException: [StatusCode.INTERNAL] Failed to increase the shared memory pool size for key 'triton_python_backend_shm_region_1' to 134217728 bytes. If you are running Triton inside docker, use '--shm-size' flag to control the shared memory region size.",
    // synthetic: the older instance-start wording
    '| my_model | 1 | UNAVAILABLE: Internal: Failed to initialize the model instance my_model_0 because it run out of shared memory. Increase the shared memory size to fix this error. |',
  ])(
    'synthetic Triton python backend %#',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'triton-python-backend-shm', category: 'shm_exhausted' });
      expect(d!.fixes[0].summary).toMatch(/shm-default-byte-size/);
    },
    TEST_TIMEOUT,
  );

  it.each([
    // synthetic: Paddle 2.x's enforce prefix on the mmap failure, a PaddleDetection worker
    'RuntimeError: (Unavailable) Memory map failed when create shared memory.\n  [Hint: Expected ptr != ((void *) -1), but received ptr:0xffffffffffffffff == ((void *) -1):0xffffffffffffffff.] (at /paddle/paddle/fluid/memory/allocation/mmap_allocator.cc:95)',
    // synthetic: the (External) form naming /dev/shm
    'OSError: (External) Cannot create shared memory in /dev/shm: No space left on device (at /paddle/paddle/fluid/memory/allocation/mmap_allocator.cc:121)',
  ])(
    'synthetic Paddle DataLoader shm %#',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'paddle-shm-mmap', category: 'shm_exhausted' });
      expect(d!.fixes[0].summary).toMatch(/use_shared_memory=False/);
    },
    TEST_TIMEOUT,
  );

  it(
    "confuser (synthetic): Triton's CUDA memory pool line is no shared-memory failure",
    async () => {
      const d = await diagnosePaste(
        'I0809 10:19:07.022014 3254750 cuda_memory_manager.cc:107] CUDA memory pool is created on device 0 with size 67108864\nI0809 10:19:07.415121 3254749 model_lifecycle.cc:469] loading: preprocessing:1',
      );
      expect(d?.rule).not.toBe('triton-python-backend-shm');
    },
    TEST_TIMEOUT,
  );
});

describe("a stack's own out-of-memory format, answered in its own settings", () => {
  it(
    'real: MindSpore (stacks8/3723)',
    async () => {
      const d = await firstOfCase('stacks8', '3723');
      expect(d).toMatchObject({ rule: 'mindspore-device-memory', category: 'cuda_oom' });
      expect(d!.fixes[0].summary).toMatch(/max_device_memory/);
      expect(d!.fixes[0].summary).not.toMatch(PYTORCH_LEVERS);
    },
    TEST_TIMEOUT,
  );

  it.each([
    // synthetic: MindSpore's other allocation failures (graph mode on GPU, Ascend's pool, a kernel's workspace)
    "RuntimeError: Device(id:0) memory isn't enough and alloc failed, kernel name: Default/network-WithLossCell/_backbone-ResNet/conv1-Conv2d/Conv2D-op12, alloc size: 1073741824B.",
    '[EXCEPTION] PRE_ACT(1234,ffff,python):2024-01-01-00:00:00.000.000 [mindspore/ccsrc/backend/common/mem_reuse/mem_dynamic_allocator.cc:123] CalMemBlockAllocSize] Memory not enough: current free memory size[0] is smaller than required size[2147483648].',
    "RuntimeError: Malloc for kernel workspace failed, Memory isn't enough, node:Default/MatMul-op88",
    '[CRITICAL] DEVICE(8812,python):2023-05-05-12:00:00.000.000 Out of Memory!!! total[32212254720] (dynamic[0] memory poll[524288000]) malloc[32212254720] failed!',
  ])(
    'synthetic MindSpore %#',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'mindspore-device-memory', category: 'cuda_oom' });
      expect(d!.fixes[0].summary).not.toMatch(PYTORCH_LEVERS);
    },
    TEST_TIMEOUT,
  );

  it.each([
    ['stacks8', '3704'],
    ['stacks8', '3705'],
  ])(
    'real: Caffe at batch 1, the input resolution first (%s/%s)',
    async (group, n) => {
      const d = await firstOfCase(group, n);
      expect(d).toMatchObject({ rule: 'caffe-cuda-oom', category: 'cuda_oom' });
      expect(d!.fixes[0].summary).toMatch(/resolution/);
      expect(d!.fixes[0].summary).not.toMatch(PYTORCH_LEVERS);
      expect(d!.fixes[0].changes.batch).toBeUndefined();
    },
    TEST_TIMEOUT,
  );

  it.each([
    // synthetic: an OpenPose-style Caffe fork in training, another line number and file
    'F0903 14:31:26.106397 92421 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory\n*** Check failure stack trace: ***\n    @     0x7fd08b2290e0  caffe::SyncedMemory::to_gpu()\n    @     0x7fd08b3a6eca  caffe::Solver<>::Solve()',
    // synthetic: the check from another Caffe source file
    'F1207 13:15:15.628818  1771 cudnn_conv_layer.cpp:52] Check failed: error == cudaSuccess (2 vs. 0)  out of memory',
  ])(
    'synthetic Caffe, batch not stated: batch_size with iter_size %#',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'caffe-cuda-oom', category: 'cuda_oom' });
      expect(d!.fixes[0].summary).toMatch(/iter_size/);
      expect(d!.fixes[0].summary).not.toMatch(PYTORCH_LEVERS);
    },
    TEST_TIMEOUT,
  );

  it.each([
    ['stacks8', '3702'],
    ['stacks8', '3703'],
  ])(
    'real: MXNet (%s/%s)',
    async (group, n) => {
      const d = await firstOfCase(group, n);
      expect(d).toMatchObject({ rule: 'mxnet-cuda-oom', category: 'cuda_oom' });
      expect(d!.fixes[0].summary).toMatch(/MXNET_GPU_MEM_POOL_TYPE/);
      expect(d!.fixes[0].summary).not.toMatch(PYTORCH_LEVERS);
    },
    TEST_TIMEOUT,
  );

  it.each([
    // synthetic: MXNet 1.x in Gluon, another header line number
    'mxnet.base.MXNetError: [08:15:02] src/storage/./pooled_storage_manager.h:161: cudaMalloc retry failed: out of memory\nStack trace:\n  [bt] (0) /usr/local/lib/python3.8/dist-packages/mxnet/libmxnet.so(+0x4b04cb) [0x7f0a1c2a44cb]',
    // synthetic: the storage manager line alone
    '[10:01:11] src/storage/./pooled_storage_manager.h:108: cudaMalloc failed: out of memory',
  ])(
    'synthetic MXNet %#',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'mxnet-cuda-oom', category: 'cuda_oom' });
    },
    TEST_TIMEOUT,
  );

  it(
    "confuser (synthetic): llama.cpp's cudaMalloc line is not MXNet's",
    async () => {
      const d = await diagnosePaste(
        'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 25600.00 MiB on device 0: cudaMalloc failed: out of memory\nllama_model_load: error loading model: unable to allocate CUDA0 buffer',
      );
      expect(d?.rule).not.toBe('mxnet-cuda-oom');
    },
    TEST_TIMEOUT,
  );

  it.each([
    ['stacks8', '3721'],
    ['stacks8', '3720'],
  ])(
    "real: TensorRT's builder, its workspace first (%s/%s)",
    async (group, n) => {
      const d = await firstOfCase(group, n);
      expect(d?.rule).toBe('tensorrt-gpu-memory');
      expect(d!.fixes[0].summary).toMatch(/workspace/);
      expect(d!.fixes[0].summary).toMatch(/warnings/);
      expect(d!.fixes[0].summary).not.toMatch(PYTORCH_LEVERS);
    },
    TEST_TIMEOUT,
  );

  it(
    "synthetic: TensorRT's tactic lines beside CUDA's own OOM: the CUDA rule reads the figures",
    async () => {
      const d = await diagnosePaste(
        '[TRT] [W] Requested amount of GPU memory (2147483648 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 11.72 GiB of which 512.00 MiB is free.',
      );
      expect(d?.rule).toBe('cuda-oom');
    },
    TEST_TIMEOUT,
  );
});

describe("NCCL's socket layer in the forms older releases print (no 'NCCL' prefix): a network setup failure", () => {
  it(
    'real: stacks8/3714 (Socket creation failed)',
    async () => {
      const d = await firstOfCase('stacks8', '3714');
      expect(d).toMatchObject({ rule: 'nccl-setup-error', category: 'nccl_or_distributed' });
      expect(d!.fixes[0].summary).toMatch(/NCCL_SOCKET_IFNAME/);
    },
    TEST_TIMEOUT,
  );

  it.each([
    // synthetic: NCCL 2.0-2.3's socket.h lines, other hosts and errno texts
    "node3:[2] include/socket.h:185 WARN Call to connect failed : Connection refused\nNCCL failure train.cu:110 'unhandled system error'",
    'gpu01:55:55 [0] include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol',
    'worker-1:1201:1290 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 192.168.1.20<51234> failed : No route to host',
  ])(
    'synthetic %#',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'nccl-setup-error', category: 'nccl_or_distributed' });
    },
    TEST_TIMEOUT,
  );
});

describe("c10d's store on this machine (127.0.0.1, localhost): the rank that hosts it, not the address", () => {
  it(
    'real: stacks8/3717 (TimeoutError ... trying to connect to (127.0.0.1, 48391))',
    async () => {
      const d = await firstOfCase('stacks8', '3717');
      expect(d?.category).toBe('nccl_or_distributed');
      expect(d!.fixes[0].summary).toMatch(/on this same machine/);
      expect(d!.fixes[0].summary).toMatch(/rank 0's own output/);
      expect(d!.fixes[0].summary).not.toMatch(/not 127\.0\.0\.1/);
    },
    TEST_TIMEOUT,
  );

  it.each([
    // synthetic: torch 2.x's DistNetworkError to localhost, and the IPv6 loopback
    'torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect to (localhost, 29500).',
    '[E socket.cpp:957] [c10d] The client socket has timed out after 900s while trying to connect to (::1, 29400).',
    'torch.distributed.DistNetworkError: The client socket has timed out after 1800000ms while trying to connect to (127.0.0.1, 12345).',
  ])(
    'synthetic loopback %#',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d?.category).toBe('nccl_or_distributed');
      expect(d!.fixes[0].summary).toMatch(/on this same machine/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: another host keeps the reachability advice',
    async () => {
      const d = await diagnosePaste(
        'torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect to (10.0.3.17, 29500).',
      );
      expect(d!.fixes[0].summary).toMatch(/reachable IP/);
      expect(d!.fixes[0].summary).not.toMatch(/on this same machine/);
    },
    TEST_TIMEOUT,
  );
});

describe("NCCL's 'unhandled system error' with every rank on one machine: /dev/shm first, not the network", () => {
  it(
    'real: stacks8/3711 (nccl-tests, one host, in a container)',
    async () => {
      const d = await firstOfCase('stacks8', '3711');
      expect(d).toMatchObject({ rule: 'nccl-system-error-one-node', category: 'nccl_or_distributed' });
      expect(d!.fixes[0].summary).toMatch(/--shm-size/);
      expect(d!.fixes[0].summary).not.toMatch(/NCCL_SOCKET_IFNAME/);
    },
    TEST_TIMEOUT,
  );

  it.each([
    // synthetic: NCCL's own INFO line says one node
    'node01:2231:2301 [1] NCCL INFO comm 0x55d0 rank 1 nRanks 4 nNodes 1 localRanks 4 localRank 1 MNNVL 0 - Init START\nRuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\nncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.',
    // synthetic: torchrun --standalone on one machine
    'torchrun --standalone --nproc_per_node=8 train.py\ntorch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error, NCCL version 2.18.1',
    // synthetic: the user's words, in Chinese
    '单机多卡训练时报错：\nRuntimeError: NCCL error in: ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8',
  ])(
    'synthetic %#',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'nccl-system-error-one-node', category: 'nccl_or_distributed' });
    },
    TEST_TIMEOUT,
  );

  it.each([
    // synthetic near misses: a WARN line that names a socket, and no sign of one machine
    'node0:11:11 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2\nnode0:11:30 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.1.1.2<40000> failed : Connection refused\nRuntimeError: NCCL error: unhandled system error',
    'RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.10.3',
  ])(
    'confuser (synthetic) %#: the network rule answers',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d?.rule).toBe('nccl-setup-error');
    },
    TEST_TIMEOUT,
  );
});

describe('more fixed formats of distributed start-up and of Paddle 1.x (synthetic variants of each)', () => {
  it.each([
    'torch.distributed.DistStoreError: Socket Timeout',
    '[rank3]: RuntimeError: Socket Timeout\nException raised from doWait at ../torch/csrc/distributed/c10d/TCPStore.cpp:550',
    '[E socket.cpp:922] [c10d] Socket Timeout while waiting for key 0',
  ])(
    "c10d's store timing out a wait: the rank that never set its key (%#)",
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'nccl-rendezvous-timeout', category: 'nccl_or_distributed' });
    },
    TEST_TIMEOUT,
  );

  it.each([
    '[E ProcessGroupGloo.cpp:138] Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error',
    'RuntimeError: Gloo connectFullMesh failed with [/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:211] Connection refused',
  ])(
    "Gloo's pairs could not connect: the interface, GLOO_SOCKET_IFNAME (%#)",
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'nccl-setup-error', category: 'nccl_or_distributed' });
      expect(d!.fixes[0].summary).toMatch(/GLOO_SOCKET_IFNAME/);
    },
    TEST_TIMEOUT,
  );

  it.each([
    'paddle.fluid.core_avx.EnforceNotMet: Data check failed. Expected allocating_memory <= available_memory, but received allocating_memory:10513462067 > available_memory:1369702144. at [/paddle/paddle/fluid/platform/gpu_info.cc:106]',
    'paddle.fluid.core.EnforceNotMet: enforce allocating <= available failed, 2147483648 > 104857600\nat [/paddle/paddle/fluid/platform/gpu_info.cc:89]',
  ])(
    "Paddle 1.x's allocator enforce: a GPU out of memory with its two figures (%#)",
    async (paste) => {
      const d = await diagnosePaste(paste);
      // the CUDA rule answers it (the recognition rule speaks where that rule did not recognise the line itself)
      expect(d?.category).toBe('cuda_oom');
      expect(['paddle-gpu-alloc-enforce', 'cuda-oom']).toContain(d?.rule);
    },
    TEST_TIMEOUT,
  );
});

describe('/dev/shm told by its room, and the launcher giving SIGBUS as an exit code (synthetic variants)', () => {
  it.each(['/dev/shm 空间不足，dataloader 报错', '训练时共享内存大小不够，num_workers 改成 0 就好了', 'the container shm size is too small for 8 workers'])(
    'the room of /dev/shm named short (%#)',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d?.category).toBe('shm_exhausted');
    },
    TEST_TIMEOUT,
  );

  it(
    "torch elastic's 'exitcode: -7' (SIGBUS) in a container",
    async () => {
      const d = await diagnosePaste(
        'docker run --gpus all -it my-image torchrun --nproc_per_node 4 train.py\ntorch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 2 (pid: 4312) of binary: /usr/bin/python3',
      );
      expect(d).toMatchObject({ rule: 'bus-error-container', category: 'shm_exhausted' });
    },
    TEST_TIMEOUT,
  );

  it(
    'confuser: a shm word beside a CUDA out-of-memory error stays the GPU answer',
    async () => {
      const d = await diagnosePaste(
        'docker run --shm-size=16g ...\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.10 GiB is free. Of the allocated memory 21.80 GiB is allocated by PyTorch',
      );
      expect(d?.category).toBe('cuda_oom');
    },
    TEST_TIMEOUT,
  );
});

describe("LLM servers' own out-of-memory formats, answered in their own settings (synthetic variants)", () => {
  it.each([
    'Error: llama runner process has terminated: cudaMalloc failed: out of memory',
    'time=2025-01-01T00:00:00.000Z level=ERROR source=sched.go:455 msg="error loading llama server" error="llama runner process has terminated: CUDA error: out of memory\\n  current device: 1"',
    'ollama run qwen2.5:32b\nError: llama runner process terminated: out of memory',
  ])(
    'Ollama: the context length first (%#)',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'ollama-runner-gpu-oom', category: 'cuda_oom' });
      expect(d!.fixes[0].summary).toMatch(/num_ctx/);
      expect(d!.fixes[0].summary).not.toMatch(PYTORCH_LEVERS);
    },
    TEST_TIMEOUT,
  );

  it.each([
    '[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/src/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:125)',
    '[TensorRT-LLM][ERROR] Encountered an error in forwardAsync function: [TensorRT-LLM][ERROR] CUDA runtime error in cudaMalloc: out of memory',
  ])(
    'TensorRT-LLM: the engine limits and the KV cache fraction (%#)',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'tensorrt-llm-runtime-oom', category: 'cuda_oom' });
      expect(d!.fixes[0].summary).toMatch(/kv_cache_free_gpu_mem_fraction/);
      expect(d!.fixes[0].summary).not.toMatch(PYTORCH_LEVERS);
    },
    TEST_TIMEOUT,
  );

  it(
    'confuser: an Ollama runner that died of something else is not this rule',
    async () => {
      const d = await diagnosePaste('Error: llama runner process has terminated: exit status 0xc0000409');
      expect(d?.rule).not.toBe('ollama-runner-gpu-oom');
    },
    TEST_TIMEOUT,
  );
});

describe('NCCL could not open a connection at all (no route, unreachable, refused at connect): the network setup (synthetic)', () => {
  it.each([
    'gpu3:812:901 [0] NCCL WARN Net : Connect to 10.0.0.2<43120> failed : No route to host\nRuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error',
    'node7:22:60 [2] NCCL WARN Connect to 192.168.0.11<50311> failed : Network is unreachable',
    'worker-2:1:77 [0] NCCL WARN Net : Connect to 172.16.4.9<34001> failed : Connection refused',
  ])(
    '%#',
    async (paste) => {
      const d = await diagnosePaste(paste);
      expect(d).toMatchObject({ rule: 'nccl-setup-error', category: 'nccl_or_distributed' });
      expect(d!.fixes[0].summary).toMatch(/NCCL_SOCKET_IFNAME/);
    },
    TEST_TIMEOUT,
  );
});
