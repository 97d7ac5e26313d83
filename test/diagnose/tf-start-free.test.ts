// TensorFlow 1.x's device discovery states the card's free memory before the job allocates anything ("totalMemory:
// 3.94GiB freeMemory: 187.62MiB"): most of the card gone then is another process's (levers/tf-start-free.ts). Every
// paste here is SYNTHETIC, written from TF's fixed format with other cards, figures and failures; near misses are a
// desktop's few hundred MiB and a card mostly free.
import { describe, expect, it } from 'vitest';
import { readTfStartFree } from '../../src/diagnose/levers/tf-start-free.js';
import { diagnosePaste } from './corpus-case.js';

const found = (gpu: number, name: string, total: string, free: string) =>
  [
    `2018-02-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1105] Found device ${gpu} with properties: `,
    `name: ${name} major: 6 minor: 1 memoryClockRate(GHz): 1.582`,
    'pciBusID: 0000:03:00.0',
    `totalMemory: ${total} freeMemory: ${free}`,
  ].join('\n');
const cudnn = '2018-02-01 10:00:05.000000: E tensorflow/stream_executor/cuda/cuda_dnn.cc:385] could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR';
const cublas = '2018-02-01 10:00:05.000000: E tensorflow/stream_executor/cuda/cuda_blas.cc:444] failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED';
const bfcOom =
  'tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,256,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc';

describe('readTfStartFree: the first GPU found, and whether most of it was held already', () => {
  it.each([
    ['3.94GiB', '187.62MiB', 0, '3.76 GiB'],
    ['10.92GiB', '270.19MiB', 1, '10.66 GiB'],
    ['11.17GiB', '4.20GiB', 0, '6.97 GiB'],
  ])('total %s, free %s on GPU %i: held %s', (total, free, gpu, held) => {
    expect(readTfStartFree(found(gpu, 'GeForce GTX 1080 Ti', total, free))).toMatchObject({ tfStartGpu: gpu, tfStartHeld: held });
  });
  it.each([
    ['8.00GiB', '6.63GiB'],
    ['3.94GiB', '3.41GiB'],
    ['22.38GiB', '21.57GiB'],
    ['1.95GiB', '1.50GiB'],
  ])('total %s, free %s: a desktop or nothing holds it, no verdict', (total, free) => {
    expect(readTfStartFree(found(0, 'GeForce GTX 1070', total, free)).tfStartHeld).toBeUndefined();
  });
});

describe('the replies: another process first, neither allow_growth nor the batch', () => {
  it.each([
    [found(0, 'GeForce GTX 1050 Ti', '3.94GiB', '187.62MiB'), cublas],
    [found(0, 'Tesla K80', '11.17GiB', '98.44MiB'), cudnn],
    [found(1, 'GeForce GTX 1080 Ti', '10.92GiB', '1.20GiB'), cudnn],
  ])('%#: a handle that failed on a card held at start', async (head, error) => {
    const d = await diagnosePaste(`${head}\n${error}`);
    expect(d?.rule).toBe('tensorflow-cudnn-init-memory');
    expect(d?.fixes[0].summary).toMatch(/^Another process holds this GPU: when TensorFlow found GPU \d/);
    expect(d?.fixes[0].summary).not.toMatch(/set_memory_growth/);
  });
  it('a BFC OOM on a card held at start: the holder is the other process', async () => {
    const d = await diagnosePaste(`${found(0, 'GeForce GTX 1080', '7.92GiB', '310.50MiB')}\n${bfcOom}`);
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0].summary).toMatch(/another process|CUDA_VISIBLE_DEVICES/i);
    expect(d?.fixes[0].summary).not.toMatch(/halve|batch size/i);
  });
  it('near miss: a card mostly free at start keeps the allow_growth advice', async () => {
    const d = await diagnosePaste(`${found(0, 'GeForce RTX 2080', '7.79GiB', '7.21GiB')}\n${cudnn}`);
    expect(d?.rule).toBe('tensorflow-cudnn-init-memory');
    expect(d?.fixes[0].summary).toMatch(/^Not capacity: TensorFlow reserves/);
  });
});

describe('TF up to 1.4: "Total memory:" and "Free memory:" on two lines', () => {
  const oldFound = (total: string, free: string) =>
    [
      '2017-07-05 22:16:54.532257: I tensorflow/core/common_runtime/gpu/gpu_device.cc:940] Found device 0 with properties: ',
      'name: GeForce GTX 970',
      'major: 5 minor: 2 memoryClockRate (GHz) 1.253',
      'pciBusID 0000:01:00.0',
      `Total memory: ${total}`,
      `Free memory: ${free}`,
    ].join('\n');
  it.each([
    ['3.94GiB', '113.31MiB', '3.83 GiB'],
    ['11.92GiB', '2.10GiB', '9.82 GiB'],
  ])('total %s, free %s: held %s', (total, free, held) => {
    expect(readTfStartFree(oldFound(total, free)).tfStartHeld).toBe(held);
  });
  it('a desktop share only (2.00 GiB, 1.54 GiB free): no verdict', () => {
    expect(readTfStartFree(oldFound('2.00GiB', '1.54GiB'))).toMatchObject({ tfStartFreeMiB: 1576.96, tfStartHeld: undefined });
  });
  it('a "Free memory:" line with no total before it says nothing', () => {
    expect(readTfStartFree('Free memory: 100.00MiB')).toEqual({});
  });
});

describe('TF 2.0-2.3: the card size at discovery, then the device created with what was free', () => {
  const tf2 = (size: string, mb: number) =>
    [
      '2020-10-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1716] Found device 0 with properties: ',
      `pciBusID: 0000:01:00.0 name: GeForce RTX 2080 Ti computeCapability: 7.5`,
      `coreClock: 1.545GHz coreCount: 68 deviceMemorySize: ${size} deviceMemoryBandwidth: 573.69GiB/s`,
      '2020-10-01 10:00:00.100000: I tensorflow/stream_executor/platform/default/dso_loader.cc:48] Successfully opened dynamic library libcudart.so.10.1',
      `2020-10-01 10:00:01.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1402] Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with ${mb} MB memory) -> physical GPU (device: 0, name: GeForce RTX 2080 Ti, pci bus id: 0000:01:00.0, compute capability: 7.5)`,
    ].join('\n');
  it('215 MB of a 10.76 GiB card: most of it held before', () => {
    expect(readTfStartFree(tf2('10.76GiB', 215))).toMatchObject({ tfStartFreeMiB: 215, tfStartHeld: '10.55 GiB' });
  });
  it('9700 MB of a 10.76 GiB card: nothing held to speak of', () => {
    expect(readTfStartFree(tf2('10.76GiB', 9700)).tfStartHeld).toBeUndefined();
  });
  it('a created device with no card size before it says nothing', () => {
    expect(readTfStartFree(tf2('10.76GiB', 215).replace(/deviceMemorySize: \S+/, ''))).toEqual({});
  });
  it('the cuDNN handle failure under it: another process first', async () => {
    const d = await diagnosePaste(`${tf2('7.79GiB', 302)}\n${cudnn}`);
    expect(d?.fixes[0].summary).toMatch(/^Another process holds this GPU/);
  });
});

describe("TF 1.x's up-front reservation measured against the free memory it found (synthetic)", () => {
  const upfront = (gib: string, bytes: number) =>
    `2017-08-12 08:25:14.797353: E tensorflow/stream_executor/cuda/cuda_driver.cc:924] failed to allocate ${gib}G (${bytes} bytes) from device: CUDA_ERROR_OUT_OF_MEMORY`;
  it.each([
    ['1.94GiB', '1.71GiB', '1.52', 1631518720],
    ['3.95GiB', '3.41GiB', '3.07', 3296329728],
  ])('total %s, free %s, a %s G ask: its share is the lever, not another process or the batch', async (total, free, gib, bytes) => {
    const d = await diagnosePaste(`${found(0, 'Quadro P1000', total, free)}\n${upfront(gib, bytes)}`);
    expect(d?.fixes[0].summary).toMatch(/per_process_gpu_memory_fraction/);
    expect(d?.fixes[0].summary).not.toMatch(/^Another process/);
  });
  it('near miss: a small ask beside a mostly free card is not the reservation', async () => {
    const d = await diagnosePaste(`${found(0, 'GeForce GTX 1080', '7.92GiB', '7.60GiB')}\n${upfront('0.20', 214748364)}`);
    expect(d?.fixes[0]?.summary ?? '').not.toMatch(/in one piece, nearly the whole card/);
  });
});
