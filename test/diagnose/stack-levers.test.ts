// A non-PyTorch stack's reply opens with that stack's own lever, read from its own figures (issue 23 item 5;
// src/diagnose/levers/stack-levers.ts and the rules paddle-legacy-allocator, tensorrt-build-cuda-oom,
// sd-webui-not-enough-memory): Paddle's chunk cap and pool, TensorFlow's failed tensor (a conv kernel is a weight, one
// tensor over the allocator's limit is no capacity problem, its "not a failure" retry is no failure), vLLM's weights
// against the card and a knob the report already turned, JAX's PJRT message, TensorRT's optimization profile, Ollama's context, the SD web UI's own check. Real examples are
// cases of the tuned group nonpt9 (real public threads, test/fixtures/untuned/nonpt9/cases.json); the others are
// synthetic variants written from each format's fixed text (other sizes, flags, devices and surrounding lines), and
// say so in their names.
import { describe, expect, it } from 'vitest';
import { diagnoseOutput, diagnosePaste, firstOfCase } from './corpus-case.js';

// The first case compiles the rule base; generous for a shared, loaded CI machine (no timing is asserted).
const TEST_TIMEOUT = 180_000;
const first = async (paste: string) => (await diagnosePaste(paste))?.fixes[0]?.summary ?? '';

describe("PaddlePaddle 1.x's legacy allocator: its chunk cap and pool flags before the batch", () => {
  it(
    'real: nonpt9/4317 (fraction 0.003 caps the chunk at 21.7 MB under a 195.8 MB request) and 4319 (a full pool)',
    async () => {
      const cap = await firstOfCase('nonpt9', '4317');
      expect(cap?.rule).toBe('paddle-legacy-allocator');
      expect(cap!.fixes[0].summary).toMatch(/^Not a full card: .*FLAGS_fraction_of_gpu_memory_to_use=0\.003 caps each chunk/);
      const full = await firstOfCase('nonpt9', '4319');
      expect(full!.fixes[0].summary).toMatch(/^Paddle's pool holds 10\.96 GiB of the 11\.17 GiB card.*FLAGS_allocator_strategy=auto_growth/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: another fraction, request and card; a chunk cap vs a pool that filled the card',
    async () => {
      const line = (ask: string, avail: string, total: number, chunk: string, used: string) =>
        `W0101 10:00:00.000000  4242 system_allocator.cc:121] Cannot malloc ${ask} MB GPU memory. Please shrink FLAGS_fraction_of_gpu_memory_to_use or FLAGS_initial_gpu_memory_in_mb or FLAGS_reallocate_gpu_memory_in_mbenvironment variable to a lower value. Current FLAGS_fraction_of_gpu_memory_to_use value is 0.05. Current FLAGS_initial_gpu_memory_in_mb value is 0. Current FLAGS_reallocate_gpu_memory_in_mb value is 0\nF0101 10:00:00.000100  4242 legacy_allocator.cc:201] Cannot allocate ${ask}MB in GPU 1, available ${avail}MBtotal ${total}GpuMinChunkSize 256.000000BGpuMaxChunkSize ${chunk}GPU memory used: ${used}\n*** Check failure stack trace: ***`;
      expect(await first(line('512.000000', '900.500000', 16945512448, '401.250000MB', '1.250000MB'))).toMatch(
        /^Not a full card: .*caps each chunk it takes at 401 MiB, below the 512 MiB/,
      );
      const full = await first(line('256.000000', '12.000000', 16945512448, '7.800000GB', '15.600000GB'));
      expect(full).toMatch(/^Paddle's pool holds 15\.60 GiB/);
      // the batch comes only after Paddle's own allocator flags
      expect(full.indexOf('FLAGS_allocator_strategy')).toBeLessThan(full.indexOf('batch_size'));
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: the reply in Chinese keeps the flags and the figures',
    async () => {
      const paste =
        'F0101 10:00:00.000100  4242 legacy_allocator.cc:201] Cannot allocate 300.000000MB in GPU 0, available 2.000000MBtotal 8354398208GpuMinChunkSize 256.000000BGpuMaxChunkSize 50.000000MBGPU memory used: 10.000000kB';
      const out = await diagnoseOutput(['-'], { paste, locale: 'zh' });
      expect(out).toMatch(/卡并没有满.*FLAGS_fraction_of_gpu_memory_to_use/);
    },
    TEST_TIMEOUT,
  );
});

describe("TensorFlow's failed tensor, sized from its shape and dtype", () => {
  it(
    'real: nonpt9/4301 (a 7x7 kernel at batch 1: a weight, no batch) and 4300 (one tensor over the BFC limit)',
    async () => {
      const kernel = await firstOfCase('nonpt9', '4301');
      expect(kernel!.fixes[0].summary).toMatch(
        /^The tensor TensorFlow could not allocate is a weight, not activations: a convolution kernel .*shape\[7,7,512,4096\] = 7×7, 512 → 4096/,
      );
      expect(kernel!.fixes[0].changes.batch).toBeUndefined();
      const over = await firstOfCase('nonpt9', '4300');
      expect(over!.fixes[0].summary).toMatch(
        /^Not capacity: one tensor \(shape\[1474944849\] int32: 5\.49 GiB\) is larger than TensorFlow's whole allocator limit \(2\.94 GiB\)/,
      );
    },
    TEST_TIMEOUT,
  );

  const oom = (shape: string, type = 'float') =>
    `2024-01-01 10:00:00.000000: W tensorflow/core/framework/op_kernel.cc:1733] OP_REQUIRES failed at conv_ops.cc:684 : RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[${shape}] and type ${type} on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc`;

  it.each(['3,3,1024,1024', '1,1,2048,8192', '11,11,64,256'])(
    'synthetic conv kernel shape[%s]: a weight, never a batch change',
    async (shape) => {
      const d = await diagnosePaste(oom(shape));
      expect(d!.fixes[0].summary).toMatch(/is a weight, not activations/);
      expect(d!.fixes[0].changes.batch).toBeUndefined();
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic control: an activation (NHWC, batch 16) keeps its batch reading',
    async () => {
      const d = await diagnosePaste(oom('16,112,112,147'));
      expect(d!.fixes[0].summary).not.toMatch(/is a weight/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: an 11.18 GiB tensor against an 8 GiB-limit allocator holding 2 KB is not capacity; a control under the limit is',
    async () => {
      const stats = (inUse: number) =>
        `I tensorflow/core/common_runtime/bfc_allocator.cc:1090] Stats:\nLimit:                  8589934592\nInUse:                  ${inUse}\nMaxInUse:               ${inUse}\n`;
      expect(await first(stats(2048) + oom('3,1000000000'))).toMatch(/^Not capacity: one tensor \(shape\[3,1000000000\] float: 11\.18 GiB\)/);
      expect(await first(stats(7000000000) + oom('64,256,256,64'))).not.toMatch(/^Not capacity: one tensor/);
    },
    TEST_TIMEOUT,
  );
});

describe("TensorFlow's own lines decide what the memory words mean", () => {
  it(
    'real: nonpt9/4303 (a "not a failure" retry under a title saying memory is short) is no memory diagnosis',
    async () => {
      expect(await firstOfCase('nonpt9', '4303')).toBeUndefined();
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: the retry warning alone, with a question in words, is no diagnosis; a failure after it still is',
    async () => {
      const retry =
        '2023-05-01 09:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:290] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.10GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.';
      expect(await diagnosePaste(`Is my memory not enough?\n${retry}\nEpoch 1/10 finished`)).toBeUndefined();
      const failed = `${retry}\ntensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,128,128,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc`;
      expect((await diagnosePaste(failed))?.category).toBe('cuda_oom');
    },
    TEST_TIMEOUT,
  );
});

describe("vLLM's own knobs in the order its figures and the report give", () => {
  const boot = (args: string, oom: string) =>
    `python -m vllm.entrypoints.openai.api_server ${args}\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 150.00 MiB (GPU 0; ${oom} GiB total capacity; ${oom} GiB already allocated; 10.00 MiB free; ${oom} GiB reserved in total by PyTorch)`;

  it(
    'real: nonpt9/4309 (13B in fp16 over a 22 GiB card, several GPUs asked): tensor parallel first',
    async () => {
      const d = await firstOfCase('nonpt9', '4309');
      expect(d!.fixes[0].summary).toMatch(
        /^The weights alone do not fit one GPU \(weights 13B × 2 B = 24\.21 GiB > 22\.06 GiB of the card\).*--tensor-parallel-size 2/,
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: one GPU means a quantized checkpoint first; visible GPUs mean a split; a split already enough means neither',
    async () => {
      expect(await first(boot('--model ./llama13b-chat --dtype half', '21.99'))).toMatch(
        /^The weights alone do not fit this GPU.*serve a quantized checkpoint/,
      );
      expect(await first('CUDA_VISIBLE_DEVICES=0,1 ' + boot('--model ./qwen14b --dtype half', '21.99'))).toMatch(
        /shard the weights over 2 GPUs with --tensor-parallel-size 2/,
      );
      expect(await first(boot('--model ./llama13b-chat --dtype half --tensor-parallel-size 2', '21.99'))).not.toMatch(/The weights alone do not fit/);
    },
    TEST_TIMEOUT,
  );

  it(
    'real: nonpt9/4310 and synthetic: a utilization the report says did not help puts --max-model-len first',
    async () => {
      expect((await firstOfCase('nonpt9', '4310'))!.fixes[0].summary).toMatch(/knobs: --max-model-len \(lowering --gpu-memory-utilization did not help/);
      const paste = `OOM with vLLM, lowering gpu_memory_utilization does not help\nINFO 01-01 10:00:00 model_runner.py:160] Loading model weights took 14.9 GB\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.`;
      expect(await first(paste)).toMatch(/knobs: --max-model-len/);
    },
    TEST_TIMEOUT,
  );
});

describe('JAX, TensorRT, Ollama and the SD web UI name their own first lever', () => {
  it(
    "real: nonpt9/4305 and synthetic: PJRT's request line is JAX's pool",
    async () => {
      expect((await firstOfCase('nonpt9', '4305'))!.fixes[0].summary).toMatch(/^JAX's allocator works inside a pool of XLA_PYTHON_CLIENT_MEM_FRACTION/);
      expect(await first('XlaRuntimeError? no: RESOURCE_EXHAUSTED: Failed to allocate request for 2.50GiB (2684354560B) on device ordinal 1')).toMatch(
        /^JAX's allocator/,
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'real: nonpt9/4314 (profile varies the batch) and 4315 (varies the resolution); synthetic trtexec batch range',
    async () => {
      expect((await firstOfCase('nonpt9', '4314'))!.fixes[0].summary).toMatch(/your profile varies the batch: lower the max batch of the profile/);
      expect((await firstOfCase('nonpt9', '4315'))!.fixes[0].summary).toMatch(/lower the max input resolution \(image size\) of the profile/);
      const paste =
        'trtexec --onnx=det.onnx --minShapes=images:1x3x640x640 --optShapes=images:8x3x640x640 --maxShapes=images:32x3x640x640 --fp16\n[02/02/2024-10:00:00] [E] [TRT] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Error in allocate: 2 (out of memory)';
      expect(await first(paste)).toMatch(/your profile varies the batch/);
    },
    TEST_TIMEOUT,
  );

  it(
    'real: nonpt9/4321 and synthetic: a static build (no profile) is its workspace first; the assertion after it is no kernel assert',
    async () => {
      const d = await firstOfCase('nonpt9', '4321');
      expect(d).toMatchObject({ rule: 'tensorrt-build-cuda-oom', category: 'cuda_oom' });
      expect(d!.fixes[0].summary).toMatch(/states no dynamic-shape profile: the workspace the builder was given/);
      const paste =
        "[03/03/2023-09:00:00] [E] [TRT] 2: [virtualMemoryBuffer.cpp::resizePhysical::127] Error Code 2: OutOfMemory (no further information)\n[03/03/2023-09:00:00] [E] [TRT] ../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)\nsample: sample.cpp:88: bool build(): Assertion `engine != nullptr' failed.";
      expect(await first(paste)).toMatch(/the workspace the builder was given/);
    },
    TEST_TIMEOUT,
  );

  it(
    'real: nonpt9/4322 (a crash 0xc0000409 while creating the context) is no memory diagnosis',
    async () => {
      expect(await firstOfCase('nonpt9', '4322')).toBeUndefined();
    },
    TEST_TIMEOUT,
  );

  it(
    "real: nonpt9/4316 and synthetic: Ollama's runner dying while creating the context is answered context first",
    async () => {
      expect((await firstOfCase('nonpt9', '4316'))!.fixes[0].summary).toMatch(/lower the context length \(num_ctx/);
      expect(
        await first(
          "Error: llama runner process has terminated: error:failed to create context with model '/usr/share/ollama/.ollama/models/blobs/sha256-0abc'",
        ),
      ).toMatch(/num_ctx/);
    },
    TEST_TIMEOUT,
  );

  it(
    "real: nonpt9/4320 and synthetic: the web UI's own check answers with --medvram and the resolution it names",
    async () => {
      expect((await firstOfCase('nonpt9', '4320'))!.fixes[0].summary).toMatch(/launch it with --medvram.*448x448/);
      expect(await first('RuntimeError: Not enough memory, use lower resolution (max approx. 640x640). Need: 1.2GB free, Have:0.8GB free')).toMatch(
        /--medvram.*640x640/,
      );
    },
    TEST_TIMEOUT,
  );
});
