// Fixed message formats of non-PyTorch stacks and launchers, each read by its own words (issue 23 item 5: routes by
// exception type and stack). Every paste here is SYNTHETIC, written from the format string in the library's source
// with plausible values, beside a near miss that must not take the same route:
//   TensorFlow eager copy   "Failed copying input tensor from …CPU:0 to …GPU:0 in order to run _EagerConst: Dst tensor is not initialized."
//   TensorFlow bare form    "InternalError: Dst tensor is not initialized." (a GPU allocation that failed)
//   TensorFlow pinned host  "failed to alloc N bytes on host: CUDA_ERROR_OUT_OF_MEMORY", "could not allocate pinned host memory of size: N"
//   PaddlePaddle            GPU OOM raised as Python's MemoryError; CPU allocator "Fail to alloc memory of N size, error code is 12."
//   Darknet                 "CUDA Error: out of memory" then check_error's "Assertion `0' failed."
//   Ray 1.x                 "RayOutOfMemoryError: More than 95% of the memory on node … is used (a / b GB)."
import { describe, expect, it } from 'vitest';
import { diagnosePaste } from './corpus-case.js';

const tb = (call: string) => `Traceback (most recent call last):\n  File "main.py", line 31, in <module>\n    ${call}\n`;

describe('TensorFlow "Dst tensor is not initialized" is a GPU out-of-memory (synthetic)', () => {
  it.each([
    [
      'fit, _EagerConst',
      tb('model.fit(x, y, batch_size=8)') +
        'tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from /job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:0 in order to run _EagerConst: Dst tensor is not initialized.\n',
    ],
    [
      'predict, GatherV2',
      tb('model.predict(X)') +
        'InternalError: Failed copying input tensor from /job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:1 in order to run GatherV2: Dst tensor is not initialized. [Op:GatherV2]\n',
    ],
    ['TF 1.x EagerPyFunc', 'RuntimeError: Error copying tensor to device: /job:localhost/replica:0/task:0/device:GPU:0. Dst tensor is not initialized.\n'],
    ['a title cut to its tail', '_EagerConst: Dst tensor is not initialized\nIt fails when I call fit() on my arrays.\n'],
  ])('%s: the whole input copied at once, so data on the host in batches, not the batch size', async (_n, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe('tensorflow-input-copy-oom');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0].summary).toMatch(/in batches/);
    expect(d?.fixes[0].summary).toMatch(/does not shrink it/);
  });
  it.each([
    [
      'session run of a Const',
      tb('sess.run(init)') +
        'tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized.\n\t [[Node: zeros_3 = Const[dtype=DT_FLOAT, _device="/job:localhost/replica:0/task:0/gpu:0"]()]]\n',
    ],
    ['"see above for traceback"', 'InternalError (see above for traceback): Dst tensor is not initialized.\n'],
  ])('%s: the bare form is a GPU OOM, answered as cuda-oom answers it', async (_n, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe('tensorflow-dst-tensor-oom');
    expect(d?.category).toBe('cuda_oom');
  });
  it('near miss: an uninitialised variable is not memory', async () => {
    const d = await diagnosePaste(
      tb('sess.run(out)') + 'tensorflow.python.framework.errors_impl.FailedPreconditionError: Attempting to use uninitialized value dense/kernel\n',
    );
    expect(d?.category ?? 'none').not.toBe('cuda_oom');
  });
});

describe('host-side allocations of TensorFlow and PaddlePaddle are host RAM (synthetic)', () => {
  it.each([
    [
      'TF pinned host, both lines',
      'E tensorflow/stream_executor/cuda/cuda_driver.cc:1067] failed to alloc 8589934592 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory\nW ./tensorflow/core/common_runtime/gpu/gpu_host_allocator.h:44] could not allocate pinned host memory of size: 8589934592\n',
      'pinned-host-alloc-failed',
    ],
    [
      'XLA pinned host',
      'E external/xla/xla/stream_executor/cuda/cuda_driver.cc:1580] failed to alloc 2147483648 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n',
      'pinned-host-alloc-failed',
    ],
    ['Paddle CPU allocator', '(ResourceExhausted) Fail to alloc memory of 1073741824 size, error code is 12.\n', 'host-alloc-failed'],
  ])('%s', async (_n, paste, rule) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe(rule);
    expect(d?.category).toBe('host_oom_killed');
  });
  it('near miss: the same stream executor line "on device" is the GPU', async () => {
    const d = await diagnosePaste(
      'E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 10.51G (11284250624 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n',
    );
    expect(d?.category).toBe('cuda_oom');
  });
});

describe("PaddlePaddle's GPU OOM raised as MemoryError stays the card's (synthetic)", () => {
  it.each(['0', '3'])('GPU %s', async (gpu) => {
    const paste =
      tb('loss.backward()') +
      `MemoryError: \n\n----------------------\nError Message Summary:\n----------------------\nResourceExhaustedError: \n\nOut of memory error on GPU ${gpu}. Cannot allocate 256.000244MB memory on GPU ${gpu}, 7.59GB memory has been allocated and available memory is only 60.75MB.\n\nPlease check whether there is any other process using GPU ${gpu}.\n`;
    const d = await diagnosePaste(paste);
    expect(d?.category).toBe('cuda_oom');
  });
  it("near miss: Python's own MemoryError without Paddle's GPU line is host RAM", async () => {
    const d = await diagnosePaste(tb('data = load_all()') + 'MemoryError\n');
    expect(d?.category).toBe('host_oom_killed');
  });
});

describe("Darknet's check_error on a CUDA out of memory is an OOM, not a kernel assert (synthetic)", () => {
  it.each([
    ['pjreddie', "   29 CUDA Error: out of memory\ndarknet: ./src/cuda.c:36: check_error: Assertion `0' failed.\nAborted (core dumped)\n"],
    [
      'at start-up',
      "layer     filters    size              input                output\n    0 CUDA Error: out of memory\ndarknet: ./src/cuda.c:36: check_error: Assertion `0' failed.\n",
    ],
  ])('%s', async (_n, paste) => {
    expect((await diagnosePaste(paste))?.category).toBe('cuda_oom');
  });
  it("near miss: darknet's assert on an illegal memory access stays a kernel fault", async () => {
    const d = await diagnosePaste("CUDA Error: an illegal memory access was encountered\ndarknet: ./src/cuda.c:36: check_error: Assertion `0' failed.\n");
    expect(d?.category).toBe('device_assert_not_memory');
  });
  it('near miss: PyTorch\'s lower-case "CUDA error: out of memory" beside an illegal access keeps the assert route', async () => {
    const d = await diagnosePaste(
      'RuntimeError: CUDA error: an illegal memory access was encountered\nLater, with another setting:\nRuntimeError: CUDA error: out of memory\n',
    );
    expect(d?.category).toBe('device_assert_not_memory');
  });
});

describe("Ray 1.x's memory monitor error is the node's RAM (synthetic)", () => {
  it.each([
    [
      'with its figures',
      'ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node ip-172-31-5-9 is used (60.12 / 62.8 GB). The top 10 memory consumers are:\n',
      /60\.12 \/ 62\.8 GB > 95%/,
    ],
    ['wrapped in a task error', 'ray.exceptions.RayTaskError(RayOutOfMemoryError): ray::Worker.step() (pid=811, ip=10.1.2.3)\n', /RAY_memory_usage_threshold/],
  ])('%s', async (_n, paste, figures) => {
    const d = await diagnosePaste(paste);
    expect(d?.category).toBe('host_oom_killed');
    expect(d?.fixes[0].summary).toMatch(/Ray's memory monitor/);
    expect(d?.fixes[0].summary).toMatch(figures);
  });
});

describe('JAX falling back to the CPU is a missing or failed CUDA backend; a held TPU is another process (synthetic)', () => {
  it.each([
    [
      'CPU-only jaxlib',
      'WARNING:2025-03-02 11:00:00,000:jax._src.xla_bridge:909: An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.\n',
    ],
    [
      'older cuSPARSE',
      "I0302 11:00:00.000000 77 xla_bridge.py:660] Unable to initialize backend 'cuda': Found cuSPARSE version 12001, but JAX was built against version 12200, which is newer.\n",
    ],
    [
      'plugin start-up',
      'WARNING:jax._src.xla_bridge:CUDA backend failed to initialize: Unable to load CUDA. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n',
    ],
    ['JAX 0.4.30+ raise', "RuntimeError: Backend 'cuda' failed to initialize: Unable to use CUDA because of the following issues with CUDA components:\n"],
    ['old JAX', 'WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n'],
  ])('%s', async (_n, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe('jax-gpu-backend-unavailable');
    expect(d?.fixes[0].summary).toMatch(/jax\[cuda12\]/);
  });
  it.each([
    [
      'JAX',
      "Unable to initialize backend 'tpu': ABORTED: The TPU is already in use by process with pid 9001. Not attempting to load libtpu.so in this process.\n",
    ],
    [
      'libtpu, older',
      'libtpu.so already in use by another process probably owned by another user. Run "$ sudo lsof -w /dev/accel0" to figure out which process is using the TPU.\nWARNING:absl:No GPU/TPU found, falling back to CPU.\n',
    ],
  ])('TPU held: %s', async (_n, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe('tpu-held-by-another-process');
    expect(d?.fixes[0].summary).toMatch(/lsof|pid/);
  });
  it('near miss: the warning beside a real failure of the run leaves the failure first', async () => {
    const d = await diagnosePaste(
      'WARNING:jax._src.xla_bridge:An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.\n' +
        tb('trainer.train()') +
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.68 GiB of which 1.02 GiB is free.\n',
    );
    expect(d?.category).toBe('cuda_oom');
  });
});

describe('XLA\'s "DNN library initialization failed" is cuDNN not starting: versions first, memory second (synthetic)', () => {
  it.each([
    [
      'JAX, alone',
      'jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.\n',
    ],
    [
      'JAX, new exception name',
      'jax.errors.JaxRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.\n',
    ],
    [
      'TF XLA function',
      'FailedPreconditionError: DNN library initialization failed. Look at the errors above for more details. [Op:__inference_run_graph_xla_118]\n',
    ],
  ])('%s', async (_n, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe('xla-dnn-library-init-failed');
    expect(d?.category).toBe('driver_or_smi');
    expect(d?.fixes[0].summary).toMatch(/Loaded runtime CuDNN library/);
    expect(d?.fixes[0].summary).toMatch(/XLA_PYTHON_CLIENT_MEM_FRACTION/);
  });
  it("near miss: TensorFlow's own cuDNN handle failure keeps TensorFlow's memory-growth answer", async () => {
    const d = await diagnosePaste(
      'Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\nUnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize\n',
    );
    expect(d?.rule).toBe('tensorflow-cudnn-init-memory');
  });
});

describe('PaddlePaddle naming a CUDA library it cannot open is the install, not memory (synthetic)', () => {
  it.each([
    [
      'Linux cuBLAS',
      'RuntimeError: (PreconditionNotMet) The third-party dynamic library (libcublas.so) that Paddle depends on is not configured correctly. (error code is libcublas.so: cannot open shared object file: No such file or directory)\n',
    ],
    [
      'Windows cuDNN',
      'OSError: (PreconditionNotMet) The third-party dynamic library (cudnn64_8.dll) that Paddle depends on is not configured correctly. (error code is 126)\n',
    ],
    ['CPU build', 'ValueError: (InvalidArgument) Cannot use GPU because you have installed CPU version PaddlePaddle.\n'],
  ])('%s', async (_n, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe('paddle-gpu-library-not-found');
    expect(d?.fixes[0].summary).toMatch(/run_check/);
  });
});

describe("kubectl's JSON container state names the OOM kill (synthetic)", () => {
  it('"reason":"OOMKilled"', async () => {
    const d = await diagnosePaste('{"lastState":{"terminated":{"exitCode":137,"reason":"OOMKilled","finishedAt":"2025-01-01T00:00:00Z"}}}\n');
    expect(d?.category).toBe('host_oom_killed');
  });
  it('near miss: "OOMKilled": false from docker inspect stays no OOM', async () => {
    const d = await diagnosePaste('"State": {\n    "Status": "exited",\n    "OOMKilled": false,\n    "ExitCode": 1\n');
    expect(d?.category ?? 'none').not.toBe('host_oom_killed');
  });
});

describe("Ray's ObjectStoreFullError is the node's shared-memory object store (synthetic)", () => {
  it.each([
    ['put', 'ray.exceptions.ObjectStoreFullError: Failed to put object 0a0b0c0d0e0f in object store because it is full. Object size is 1073741824 bytes.\n'],
    ['wrapped', 'ray.exceptions.RayTaskError(ObjectStoreFullError): ray::preprocess() (pid=77, ip=10.0.0.9)\n'],
  ])('%s', async (_n, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe('ray-object-store-full');
    expect(d?.fixes[0].summary).toMatch(/ray\.put a large argument once/);
  });
});
