// PyTorch's device extensions (torch_npu on Ascend, Intel XPU, Moore Threads MUSA, Cambricon MLU) raise the caching
// allocator's own message with their device's name: "NPU out of memory. Tried to allocate X (NPU 0; Y total capacity;
// Z already allocated; ... free; ... reserved in total by PyTorch)". It is the GPU out-of-memory answer, read for the
// same figures. The variants are written from that format (synthetic). In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste } from './corpus-case.js';

const message = (dev: string) =>
  `RuntimeError: ${dev} out of memory. Tried to allocate 2.00 GiB (${dev} 0; 60.97 GiB total capacity; 58.10 GiB already allocated; 58.10 GiB current active; 512.00 MiB free; 59.50 GiB reserved in total by PyTorch)`;

describe("a device extension's out-of-memory message", () => {
  it.each([
    ['torch_npu', message('NPU')],
    ['torch_npu under torchrun', `[rank3]: ${message('NPU')}`],
    ['MUSA', message('MUSA')],
    ['MLU', message('MLU')],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(`Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    loss.backward()\n${text}\n`);
    expect(d?.rule).toBe('cuda-oom');
    expect(d?.facts.triedAllocMiB).toBe(2048);
    expect(d?.facts.reservedMiB).toBe(59.5 * 1024);
  });

  it('synthetic near miss: the words in a question are no message of it', async () => {
    const d = await diagnosePaste('How much NPU memory does a 7B model need? I want to avoid NPU out of memory errors.');
    expect(d?.rule).not.toBe('cuda-oom');
  });
});
