// Issue 23's levers with their evidence, as small modules checked against their principles with variants:
// DeepSpeed ZeRO's per-rank budget (levers/zero.ts: 4 + 12/N, 2 + 14/N, 16/N bytes per parameter per GPU,
// claimed only with the stage, the rank count and no CPU offload), the batch lever at batch 1 (levers.ts: the
// static part that takes most of the card, ZeRO-1/2 keeping the whole weights), host-RAM levers (levers/host-ram.ts:
// workers only when stated above 0 or shown killed; the data's preparation before any step; otherwise the
// experiment), and DDP's reducer errors (levers/ddp-unused.ts).
import { describe, expect, it } from 'vitest';
import { worldSize, zeroBytesPerParam, zeroOffloadStated, zeroPerRankMiB } from '../../src/diagnose/levers/zero.js';
import { batchOneStaticDominates, batchOneZeroBelow3, staticDominates, staticMiB, staticOverCard } from '../../src/diagnose/levers.js';
import { hostLeverUnstated, killedLoadingData, readHostRam, workersEvidence } from '../../src/diagnose/levers/host-ram.js';
import { readDdpUnused } from '../../src/diagnose/levers/ddp-unused.js';
import { extractSettings } from '../../src/diagnose/settings.js';
import { modelParamsB, statedGpuMemoryMiB } from '../../src/diagnose/model-facts.js';
import { LogText } from '../../src/diagnose/normalize.js';
import { flatView, incidentOf, newIncident, type Incident } from '../../src/diagnose/incident/index.js';

const GiB = 1024;

describe('ZeRO per-rank budget: the stage divides optimizer state, gradients and weights by the data-parallel ranks', () => {
  it.each([
    [0, 8, 16],
    [1, 8, 4 + 12 / 8],
    [2, 4, 2 + 14 / 4],
    [2, 8, 2 + 14 / 8],
    [3, 8, 2],
    [3, 1, 16],
  ])('stage %i over %i ranks: %f bytes per parameter', (stage, ranks, bytes) => {
    expect(zeroBytesPerParam(stage, ranks)).toBeCloseTo(bytes, 6);
  });
  it('more ranks never cost more per GPU, and ZeRO-3 is the smallest share from 2 ranks on', () => {
    for (const stage of [1, 2, 3]) expect(zeroBytesPerParam(stage, 16)).toBeLessThan(zeroBytesPerParam(stage, 2));
    for (const n of [2, 4, 8, 64]) expect(zeroBytesPerParam(3, n)).toBeLessThan(zeroBytesPerParam(2, n));
  });
  const zero = (more: Incident): Incident => incidentOf({ model: { paramsB: 13 }, run: { training: true }, distributed: { zeroStage: 2 } }, more);
  it.each([
    [
      '13B, ZeRO-2 over 8 x 40 GB: 3.75 B/param = 45.4 GiB per GPU > 40 GiB',
      zero(incidentOf({ distributed: { worldSize: 8 }, figures: { totalCapacityMiB: 40 * GiB } })),
      true,
    ],
    [
      '13B, ZeRO-3 over 8 x 40 GB: 2 B/param = 24.2 GiB fits',
      zero(incidentOf({ distributed: { zeroStage: 3, worldSize: 8 }, figures: { totalCapacityMiB: 40 * GiB } })),
      false,
    ],
    ['13B, ZeRO-2 over 8 x 80 GB fits', zero(incidentOf({ distributed: { worldSize: 8 }, figures: { totalCapacityMiB: 80 * GiB } })), false],
    [
      '70B, ZeRO-3 over 8 x 80 GB: 130 GiB per GPU',
      zero(incidentOf({ model: { paramsB: 70 }, distributed: { zeroStage: 3, worldSize: 8 }, figures: { totalCapacityMiB: 80 * GiB } })),
      true,
    ],
    ['rank count unknown: no claim', zero(incidentOf({ figures: { totalCapacityMiB: 40 * GiB } })), false],
    [
      'optimizer offloaded to CPU: no claim',
      zero(incidentOf({ distributed: { worldSize: 8, zeroOffload: true }, figures: { totalCapacityMiB: 40 * GiB } })),
      false,
    ],
  ] as [string, Incident, boolean][])('%s', (_name, f, over) => {
    expect(staticOverCard(f)).toBe(over);
  });
  it('the per-rank figure is the parameters times the stage share', () => {
    expect(zeroPerRankMiB(zero(incidentOf({ distributed: { worldSize: 4 } })))!).toBeCloseTo((13e9 * 5.5) / 2 ** 20, 3);
    expect(staticMiB(zero(incidentOf({ distributed: { worldSize: 4 } })))).toBe(zeroPerRankMiB(zero(incidentOf({ distributed: { worldSize: 4 } }))));
    expect(zeroPerRankMiB(zero(newIncident()))).toBeUndefined();
  });
});

describe('the rank count from the launch, not from a commented-out line; prose names the machine', () => {
  it.each([
    ['torchrun --nproc_per_node=8 train.py --deepspeed ds.json', 8],
    ['deepspeed --num_gpus 4 main.py', 4],
    ['accelerate launch --num_processes=2 sft.py', 2],
    ['num_processes: 16\nmachine_rank: 0', 16],
    ['deepspeed --include localhost:0,1,2,3 train.py', 4],
    ['# torchrun --nproc_per_node=3\naccelerate launch train.py (4*A100 80G)', 4],
    ['4*A100 (80G) 做全参微调', 4],
    ['8 x A100 40GB, zero2', 8],
    ['8卡V100 32G全量微调', 8],
    ['NCCL INFO comm 0x55 rank 0 nranks 1 cudaDev 0', 1],
  ])('%s -> %i', (text, n) => {
    expect(worldSize(text)).toBe(n);
  });
  it('no launch or machine named: unknown', () => {
    expect(worldSize('python train.py --zero_stage 2')).toBeUndefined();
  });
  it.each([
    ['"offload_optimizer": {"device": "cpu", "pin_memory": true}', true],
    ['--deepspeed ds_z3_offload.json zero3_offload', true],
    ['"offload_optimizer": {"device": "none"}', false],
    ['"zero_optimization": {"stage": 2}', false],
  ])('offload stated in %s: %s', (text, offload) => {
    expect(zeroOffloadStated(text)).toBe(offload);
  });
  it('the settings carry the stage, the ranks and the offload together', () => {
    const f = extractSettings('deepspeed --num_gpus 8 train.py --model_name_or_path llama-13b --deepspeed ds_config_zero2.json');
    expect(flatView(f)).toMatchObject({ zeroStage: 2, worldSize: 8, paramsB: 13 });
    expect(f.distributed.zeroOffload).toBeUndefined();
  });
});

describe('batch 1: the budget points at the static part, never at halving the input', () => {
  const one = (more: Incident): Incident => incidentOf({ run: { batch: 1, training: true } }, more);
  it.each([
    ['1.7B full fine-tune on 32 GB: 25.3 GiB static is 79%', one(incidentOf({ model: { paramsB: 1.7 }, card: { statedGpuMemoryMiB: 32 * GiB } })), true],
    ['2.7B full fine-tune on 48 GB: 40.2 GiB is 84%', one(incidentOf({ model: { paramsB: 2.7 }, figures: { totalCapacityMiB: 48 * GiB } })), true],
    [
      '13B ZeRO-2 over 4 x 80 GB: 66.6 GiB per GPU is 83%',
      one(incidentOf({ model: { paramsB: 13 }, distributed: { zeroStage: 2, worldSize: 4 }, figures: { totalCapacityMiB: 80 * GiB } })),
      true,
    ],
    ['1.1B on 80 GB: 16 GiB is 20%: one input is the lever', one(incidentOf({ model: { paramsB: 1.1 }, figures: { totalCapacityMiB: 80 * GiB } })), false],
    [
      'LoRA on a 7B base on 24 GB: the base weights are 57%',
      one(incidentOf({ model: { paramsB: 7 }, run: { adapterTraining: true }, figures: { totalCapacityMiB: 24 * GiB } })),
      false,
    ],
    [
      'batch 4, same budget: halving stays possible',
      one(incidentOf({ run: { batch: 4 }, model: { paramsB: 1.7 }, card: { statedGpuMemoryMiB: 32 * GiB } })),
      false,
    ],
    [
      "batch 1 as a tool's default, not stated",
      one(incidentOf({ run: { batchDefaultOf: 'YOLOv5' }, model: { paramsB: 1.7 }, card: { statedGpuMemoryMiB: 32 * GiB } })),
      false,
    ],
    ['over the card: the static-over-card advice answers', one(incidentOf({ model: { paramsB: 7 }, figures: { totalCapacityMiB: 80 * GiB } })), false],
  ] as [string, Incident, boolean][])('%s', (_name, f, expected) => {
    expect(batchOneStaticDominates(f)).toBe(expected);
  });
  it('the share rule is training only (inference is the weights lever)', () => {
    expect(staticDominates(incidentOf({ model: { paramsB: 13, dtype: 'fp16' }, figures: { totalCapacityMiB: 32 * GiB } }))).toBe(false);
  });
  it.each([
    ['ZeRO-2, batch 1, no model size', one(incidentOf({ distributed: { zeroStage: 2 } })), true],
    ['ZeRO-1, batch 1', one(incidentOf({ distributed: { zeroStage: 1 } })), true],
    ['ZeRO-3 already shards the weights', one(incidentOf({ distributed: { zeroStage: 3 } })), false],
    ['ZeRO-2 with LoRA: the adapters are not the static part', one(incidentOf({ distributed: { zeroStage: 2 }, run: { adapterTraining: true } })), false],
    ['ZeRO-2 at batch 8', one(incidentOf({ distributed: { zeroStage: 2 }, run: { batch: 8 } })), false],
    ['no ZeRO', one(newIncident()), false],
  ] as [string, Incident, boolean][])('%s', (_name, f, expected) => {
    expect(batchOneZeroBelow3(f)).toBe(expected);
  });
});

describe('what the paste says of the model and card: counts with a fraction after the B, usage is not the card', () => {
  it.each([
    ['bigscience/bloom-1b7', 1.7],
    ['bloom-7b1', 7.1],
    ['EleutherAI/pythia-1b4', 1.4],
    ['llama-2-7b-hf', 7],
  ])('%s -> %fB', (name, b) => {
    expect(modelParamsB(` --model ${name}`, undefined)).toBeCloseTo(b, 6);
  });
  it.each([
    ['requires 28G GPU RAM in GPU #0, still OOM on my 32G GPU', 32],
    ['it uses 20GB VRAM of my 24GB VRAM card', 24],
    ['训练占用了 30G 显存，我的是 40G 显存', 40],
    ['on my 24G GPU', 24],
  ])('%s -> %i GiB', (text, gib) => {
    expect(statedGpuMemoryMiB(text)).toBe(gib * GiB);
  });
  it('a full fine-tune that mentions LoRA in a question is not adapter training; a LoRA config is', () => {
    expect(extractSettings('full fine-tuning of bloom. Have you compared LoRA and fully fine-tuning?').run.adapterTraining).toBeUndefined();
    expect(extractSettings('full fine-tuning, then lora_r: 8 for the second stage').run.adapterTraining).toBe(true);
    expect(extractSettings('finetune llama with lora').run.adapterTraining).toBe(true);
  });
  it.each([
    ['batch size =1, num_workers = 0', 1, 0],
    ['batch size: 4 and num workers of 8', 4, 8],
    ['我配置的 num_workers 为20时候，内存一直涨', undefined, 20],
  ])('prose settings in %s', (text, batch, workers) => {
    const f = extractSettings(text);
    expect(f.run.batch).toBe(batch);
    expect(f.host.workers).toBe(workers);
  });
  it.each([
    ['32G的内存，最后被killed了', 32],
    ['a machine with 64GB of RAM', 64],
    ['16 GB RAM', 16],
  ])('host RAM in %s', (text, gib) => {
    expect(extractSettings(text).host.hostRamGiB).toBe(gib);
  });
});

describe('host RAM: every lever needs its evidence', () => {
  it.each([
    ['workers=8 stated', incidentOf({ host: { workers: 8 } }), true],
    ['a killed worker shown, count unknown', incidentOf({ host: { workersShown: true } }), true],
    ['0 workers stated: nothing to lower', incidentOf({ host: { workers: 0 } }), false],
    ['nothing about workers', newIncident(), false],
  ] as [string, Incident, boolean][])('workers lever: %s', (_name, f, expected) => {
    expect(workersEvidence(f)).toBe(expected);
  });
  it.each([
    ['RuntimeError: DataLoader worker (pid 12847) is killed by signal: Killed.', true],
    ['RuntimeError: DataLoader worker (pid(s) 123, 456) exited unexpectedly', true],
    ['RuntimeError: DataLoader worker (pid 99) is killed by signal: Bus error.', false],
    ['Killed', false],
  ])('%s shows a worker: %s', (text, shown) => {
    expect(readHostRam(text).workersShown === true).toBe(shown);
  });
  it.each([
    ['sentencepiece lines', 'trainer_interface.cc(137) LOG(INFO) Loaded 107000000 lines\ntrainer_interface.cc(137) LOG(INFO) Loaded 108000000 lines\nKilled'],
    ['a datasets map', 'Running tokenizer on dataset:  12%|█▏        | 120000/1000000\nKilled'],
    ['a parallel map', 'Map (num_proc=32):  45%|████▌     | 450000/1000000 [01:02<01:20]\nKilled'],
    ['rows read', 'reading 2000000 rows from train.csv\nKilled'],
    ['documents loaded', 'Loaded 30000 documents\nexitcode  : -9'],
  ])('killed while the data was prepared (%s)', (_name, text) => {
    expect(killedLoadingData(text)).toBe(true);
  });
  it('a kill after training steps logged a loss is not the data preparation', () => {
    expect(killedLoadingData('Loaded 30000 documents\nepoch 1 step 10 loss 2.31\nKilled')).toBe(false);
  });
  it.each([
    ['no lever at all', newIncident(), true],
    ['0 workers and a batch: still no lever', incidentOf({ host: { workers: 0 }, run: { batch: 4 } }), true],
    ['workers stated', incidentOf({ host: { workers: 16 } }), false],
    ['killed loading data', incidentOf({ host: { killedLoadingData: true } }), false],
    ['killed loading the model', incidentOf({ host: { killedWhileLoading: true } }), false],
    ['a 7B model and no workers: each process copies the weights', incidentOf({ model: { paramsB: 7 } }), false],
    ['a RAM cache', incidentOf({ run: { cache: 'ram' } }), false],
    ["Ray's monitor", incidentOf({ stack: { rayMonitor: '12.5/13.1 GB' } }), false],
  ] as [string, Incident, boolean][])('the experiment when %s', (_name, f, expected) => {
    expect(hostLeverUnstated(f)).toBe(expected);
  });
});

describe("DDP's reducer errors: which one, and whether find_unused_parameters is already on", () => {
  const read = (text: string) => readDdpUnused(new LogText(text));
  it('the error advising find_unused_parameters=True is not the setting', () => {
    const r = read(
      'RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`',
    );
    expect(r).toEqual({});
  });
  it.each([
    ['an mmcv config line', 'find_unused_parameters = True\nRuntimeError: Expected to have finished reduction'],
    ['the DDP call', 'model = DistributedDataParallel(model, device_ids=[rank], find_unused_parameters=True)'],
    ['an HF command', 'torchrun train.py --ddp_find_unused_parameters true'],
    ["the user's sentence", 'when i set `find_unused_parameters = True`, error disappears but training freezes'],
  ])('set: %s', (_name, text) => {
    expect(read(text).ddpFindUnusedSet).toBe(true);
  });
  it('a question about the flag is not a run with it set', () => {
    expect(read('it could be resolved by passing setting find_unused_parameters = True like parta2, however I wonder why').ddpFindUnusedSet).toBeUndefined();
  });
  it.each([
    [
      'Parameter at index 447 with name base_model.model.layers.31.mlp.down_proj.lora_B.default.weight has been marked as ready twice.',
      'base_model.model.layers.31.mlp.down_proj.lora_B.default.weight',
    ],
    ['RuntimeError: Expected to mark a variable ready only once. This error is caused by ...', undefined],
    ['Parameter at index 753 has been marked as ready twice.', undefined],
  ])('marked twice: %s', (text, name) => {
    const r = read(text);
    expect(r.ddpMarkedTwice).toBe(true);
    expect(r.ddpParameter).toBe(name);
  });
  it('names a parameter that received no gradient (TORCH_DISTRIBUTED_DEBUG=DETAIL)', () => {
    expect(read('Parameters which did not receive grad for rank 0: head.fc.weight').ddpParameter).toBe('head.fc.weight');
  });
});
