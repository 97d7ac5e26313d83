// Issue 23, class 5 (wording decides the route): the memory named in the failure decides whether it is the device's or
// the host's (src/diagnose/memory-named.ts). Device words (CUDA, GPU, VRAM, 显存, Metal, a card by its number) make a
// device OOM; host RAM needs host evidence (a kill, a host allocator). Device words are specific and "RAM" / 内存 in a
// report loose, so a host shortage told with no kill yields to a device failure told beside it; 内存 said of a numbered
// card is the card's; an error shown as ANOTHER setting's outcome ("Otherwise, it says") is not this run's failure.
// Real examples: read splits blind10 6201, 6242 and blind11 6673, 6681, and route14 7337, 7338 (public threads, URLs in
// their cases.json); the
// other texts are synthetic variants written from the principle, with near misses where it must not fire. In process.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('device words decide a memory failure told in words', () => {
  it.each([
    ['blind10', '6201'], // RAM out for 500 images, VRAM OOM at 2 images: the card
    ['blind10', '6242'], // CUDA OOM in the title and the error; the host allocator error is shown under "Otherwise, it says"
    ['blind11', '6673'], // MLX's "[METAL] Command buffer execution failed: Insufficient Memory" on an M1 with "64Gb of RAM"
    ['blind11', '6681'], // 0号卡 ... 内存就溢出了: 内存 of a numbered card
    ['route14', '7337'], // 只用到了其中1张卡，导致内存不足: 内存 of the one card used
    ['route14', '7338'], // 开启MPS显示内存不足 beside ggml_metal's working-set lines: the GPU's share of unified memory
  ])('real %s/%s: a device OOM, not host RAM', async (group, n) => {
    expect((await firstOfCase(group, n))?.category).toBe('cuda_oom');
  });

  it.each([
    ['RAM and VRAM both told, no kill', 'Batch job fails\n\nWith 300 frames I run out of RAM. With 10 frames it still goes OOM on the VRAM.'],
    [
      'system memory and GPU memory told',
      'Inference crashes\n\nSystem memory runs out when I queue many prompts, and with one prompt the GPU memory runs out too.',
    ],
    ['Chinese: 内存 of a numbered card', '推理报错\n\n两张卡，1号卡已经被别的程序占了一部分，加载模型后推理一会，内存就不够了。'],
    ['Chinese: 内存 of the second card', '多卡训练问题\n\n第二张卡的内存溢出了，第一张卡还有很多空闲。'],
    ['Chinese: 内存 of a card counted by a digit', '推理显存问题\n\n我有4张卡，但程序只用到了其中1张卡，导致内存不足。'],
    ['Chinese: 内存 beside MPS on a Mac', 'Mac 上运行报错\n\n16GB 的 M1，开启MPS后提示内存不足。'],
    [
      'Metal named on the error line',
      'Crash on long prompt\n\nlibc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory\n\nMacBook Pro with 32GB of RAM.',
    ],
  ])('synthetic: %s -> device OOM', async (_name, text) => {
    expect((await diagnosePaste(text))?.category).toBe('cuda_oom');
  });

  it('synthetic: a host allocator error shown under "Otherwise, it says" yields to the CUDA OOM of this run', async () => {
    const text = [
      'OOM when chatting',
      '',
      '```',
      'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB (GPU 0; 15.77 GiB total capacity; 14.20 GiB already allocated; 300.00 MiB free; 14.30 GiB reserved in total by PyTorch)',
      '```',
      '',
      'I load the model with device_map="auto". Otherwise, it says:',
      '```',
      "RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 536870912 bytes. Error code 12 (Cannot allocate memory)",
      '```',
    ].join('\n');
    expect((await diagnosePaste(text))?.category).toBe('cuda_oom');
  });

  // Near misses: host evidence stays the host's.
  it.each([
    ['a kill beside VRAM words', 'Process killed\n\nThe extension avoids the VRAM error, but now the process is killed when it runs out of RAM.'],
    ['Chinese: 内存 with no card named', '加载数据时内存溢出\n\n数据集有200G，加载的时候内存溢出了。'],
    ['Chinese: a card named but host RAM said', '训练问题\n\n用一张卡训练，主机内存溢出了，显卡还空着。'],
    ['Chinese: 内存 on a Mac with no MPS or Metal named', 'Mac 上运行报错\n\n16GB 的 M1，用 CPU 跑的时候提示内存不足。'],
    ['RAM alone, no device words', 'Runs out of RAM\n\nThe preprocessing step runs out of RAM on my 16 GB machine.'],
  ])('synthetic near miss: %s -> host', async (_name, text) => {
    expect((await diagnosePaste(text))?.category).toBe('host_oom_killed');
  });

  it('synthetic near miss: the host allocator error alone, after "Otherwise", stays the host\'s (no other failure shown)', async () => {
    const text =
      "Loading fails\n\nI tried without device_map. Otherwise, it says:\n```\nRuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 536870912 bytes. Error code 12 (Cannot allocate memory)\n```";
    expect((await diagnosePaste(text))?.category).toBe('host_oom_killed');
  });
});
