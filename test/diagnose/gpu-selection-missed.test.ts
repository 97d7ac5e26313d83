// Issue 23, another holder: a device selection that did not apply. The paste states the GPUs the job was given
// (CUDA_VISIBLE_DEVICES before start, a --gpus flag, "我使用1，2，3号卡") and the card another job fills ("only GPU 0 is
// filled", "0号卡别人在用"), or a selection made inside the process while the OOM names a card outside it: the job met
// another job's memory, so the selection did not reach the process. The first fix checks where the PID runs and
// applies the selection; not the model, not the batch. Real examples: blind9 5787 and blind10 6271 (public threads, URLs
// in their cases.json); the other texts are synthetic variants written from the principle, with near misses where a
// selection is stated but nothing says it failed to apply. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { readGpuSelection } from '../../src/diagnose/levers/gpu-selection.js';

const oom = (gpu: number) =>
  `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 460.00 MiB (GPU ${gpu}; 10.76 GiB total capacity; 9.80 GiB already allocated; 120.00 MiB free; 9.90 GiB reserved in total by PyTorch)`;
const first = async (text: string) => (await diagnosePaste(text))?.fixes[0]?.summary ?? '';
const MISSED = /selection did not reach the process/;

describe('a device selection that did not apply: apply it before any setting', () => {
  it('real blind9/5787: 使用1，2，3号卡，0号卡别人在用, validation OOM on GPU 0', async () => {
    const d = await firstOfCase('blind9', '5787');
    expect(d?.fixes[0]?.summary).toMatch(MISSED);
    expect(d?.fixes[0]?.summary).toMatch(/CUDA_VISIBLE_DEVICES=1,2,3/);
  });
  it('real blind10/6271: export CUDA_VISIBLE_DEVICES=1, "only GPU=0 is filled", OOM while creating weights', async () => {
    const d = await firstOfCase('blind10', '6271');
    expect(d?.fixes[0]?.summary).toMatch(MISSED);
    expect(d?.fixes[0]?.changes).not.toHaveProperty('batch');
  });
  it.each([
    [
      'env selection, busy card stated',
      `export CUDA_VISIBLE_DEVICES=2\npython train.py\nGPU 0 is occupied by another user, GPU 2 is empty.\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 460.00 MiB (GPU 0; 10.76 GiB total capacity)`,
    ],
    ['flag selection, OOM on a card outside it', `python train.py --gpus 1,2\n${oom(0)}`],
    ['device_ids, OOM on a card outside it', `model = nn.DataParallel(model, device_ids=[2, 3])\n${oom(0)}`],
    ['zh: 指定了GPU1, GPU0被占用', `我已经指定了GPU1，GPU0被别人占满了，为什么还是爆显存？\n${oom(0)}`],
    ['words: I use GPU 3, GPU 0 is full', `I used GPU 3 for this run; GPU 0 is already full with another job.\n${oom(0)}`],
    ['device string, "GPU 0 memory is full", words only', 'I run with device="cuda:2" but my GPU 0 memory is full, so it reports CUDA out of memory.'],
    ['space-separated ids', `python train.py --gpu_ids 2 3 --batch_size 8\n${oom(0)}`],
    ['set_device in code', `torch.cuda.set_device(3)\n${oom(1)}`],
    ['zh ordinals: 前两块被占用, 用第三块', `前两块GPU被其他同学占用了，我在配置里设置了用第三块GPU，还是报错显存不够。\n${oom(0)}`],
  ])('synthetic: %s', async (_name, text) => {
    expect(await first(text)).toMatch(MISSED);
  });
  it('synthetic near misses: a selection that is consistent with the failing card keeps the usual reply', async () => {
    // CUDA_VISIBLE_DEVICES renumbers: GPU 1 is "GPU 0" inside the process, so the index alone says nothing.
    expect(await first(`CUDA_VISIBLE_DEVICES=1 python train.py\n${oom(0)}`)).not.toMatch(MISSED);
    // The busy card is the one the job was given: that card is full, the selection applied.
    expect(await first(`python train.py --gpus 0\nGPU 0 is full.\n${oom(0)}`)).not.toMatch(MISSED);
    // A selection inside the process that includes the failing card.
    expect(await first(`python train.py --gpus 0,1\n${oom(1)}`)).not.toMatch(MISSED);
    // The figures outrank the words: under CUDA_VISIBLE_DEVICES the "GPU 0" the report calls busy is this process's own card.
    const own = oom(0).replace('9.80 GiB already allocated', '10.40 GiB already allocated');
    expect(await first(`CUDA_VISIBLE_DEVICES=3 python train.py\nGPU 0 is in use.\n${own}`)).not.toMatch(MISSED);
    // "调用" (to call) names no card the job was given.
    expect(await first(`为什么还是会调用第0块GPU？\n${oom(0)}`)).not.toMatch(MISSED);
    // No selection stated at all.
    expect(await first(`GPU 1 is busy with another job.\n${oom(0)}`)).not.toMatch(MISSED);
  });
  it('real stack13/6951 and 6952 (tuned group): 第三块 against 前两块被占用; device=cuda:4 against a full GPU 0', async () => {
    expect((await firstOfCase('stack13', '6951'))?.fixes[0]?.summary).toMatch(MISSED);
    expect((await firstOfCase('stack13', '6952'))?.fixes[0]?.summary).toMatch(MISSED);
  });
  it('real near misses stack13/6953, 6954: the card in the message is the renumbered one the job was given', async () => {
    expect((await firstOfCase('stack13', '6953'))?.fixes[0]?.summary).not.toMatch(MISSED);
    expect((await firstOfCase('stack13', '6954'))?.fixes[0]?.summary).not.toMatch(MISSED);
  });
  it('reads the selection and the busy card, not a denial or a list tail', () => {
    expect(readGpuSelection('我使用1，2，3号卡，0号卡别人在用')).toEqual({ gpuSelected: '1,2,3', gpuSelectedBy: 'index', gpuBusyStated: 0 });
    expect(readGpuSelection('export CUDA_VISIBLE_DEVICES=1\nnothing is on GPU=1, only GPU=0 is filled.')).toEqual({
      gpuSelected: '1',
      gpuSelectedBy: 'env',
      gpuBusyStated: 0,
    });
    expect(readGpuSelection('nothing is on GPU 1')).toEqual({});
  });
});
