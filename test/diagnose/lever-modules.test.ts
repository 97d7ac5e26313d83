// The small modules behind the levers (issue 23): the batch lever's preconditions and the static part
// (levers.ts), the dtype read from a failed request (precision.ts), and the allocator variable's two
// names (alloc-conf.ts). Each is checked against its principle with values from several model families.
import { describe, expect, it } from 'vitest';
import { batchLever, staticMiB, staticOverCard } from '../../src/diagnose/levers.js';
import { fp32MatrixOf } from '../../src/diagnose/precision.js';
import { allocConfFacts } from '../../src/diagnose/alloc-conf.js';
import { torchVersion } from '../../src/diagnose/torch-version.js';
import { incidentOf, type Incident, type IncidentPatch } from '../../src/diagnose/incident/index.js';

describe('batch lever preconditions', () => {
  const activations: Incident = incidentOf({ run: { batch: 32 }, figures: { totalCapacityMiB: 24_000 }, phase: { name: 'forward' } });
  it('a training forward with nothing against it: the batch is a lever', () => {
    expect(batchLever(activations)).toEqual({ holds: true });
    expect(batchLever(incidentOf(activations, { phase: { name: 'backward' } })).holds).toBe(true);
    expect(batchLever(incidentOf({ run: { batch: 8 } })).holds).toBe(true);
  });
  it.each([
    ['evaluation', { phase: { name: 'eval' } }, 'phase'],
    ['the model load', { phase: { name: 'load' } }, 'phase'],
    ['a checkpoint read', { phase: { name: 'checkpoint' } }, 'phase'],
    ['a collective', { phase: { name: 'collective' } }, 'phase'],
    ['the optimizer step', { phase: { name: 'optimizer' } }, 'phase'],
    ['generation', { phase: { generating: true } }, 'inference'],
    ['a serving tool', { run: { inference: true } }, 'inference'],
    ['a rising series', { series: { memoryShape: 'growth' } }, 'growth'],
    ['a saw-tooth on a rising floor', { series: { memoryShape: 'sawtooth_rising' } }, 'growth'],
    ['a 13B full fine-tune on 24 GB', { model: { paramsB: 13 }, run: { training: true } }, 'static_over_card'],
    ['70B weights alone on an 80 GB card', { model: { paramsB: 70, dtype: 'bf16' }, figures: { totalCapacityMiB: 81_000 } }, 'static_over_card'],
  ] as [string, IncidentPatch, string][])('%s blocks it', (_name, extra, why) => {
    expect(batchLever(incidentOf(activations, extra))).toEqual({ holds: false, blockedBy: why });
  });
  it('a flat series does not block it', () => {
    expect(batchLever(incidentOf(activations, { series: { memoryShape: 'flat' } })).holds).toBe(true);
  });
});

describe('the static part: weights, and for full training gradients and optimizer state', () => {
  it.each([
    ['7B inference in bf16', incidentOf({ model: { paramsB: 7, dtype: 'bf16' } }), 7e9 * 2],
    ['7B inference in fp32', incidentOf({ model: { paramsB: 7, dtype: 'fp32' } }), 7e9 * 4],
    [
      '7B LoRA on a bf16 base (adapters negligible)',
      incidentOf({ model: { paramsB: 7, dtype: 'bf16' }, run: { training: true, adapterTraining: true } }),
      7e9 * 2,
    ],
    ['7B full fine-tune with AdamW, mixed precision', incidentOf({ model: { paramsB: 7 }, run: { training: true } }), 7e9 * 16],
  ] as [string, Incident, number][])('%s', (_name, f, bytes) => {
    expect(staticMiB(f)).toBeCloseTo(bytes / 2 ** 20, 3);
  });
  it('under ZeRO the rank count divides it: not claimed', () => {
    expect(staticMiB(incidentOf({ model: { paramsB: 7 }, run: { training: true }, distributed: { zeroStage: 2 } }))).toBeUndefined();
  });
  it('over the card only when the card is known', () => {
    expect(staticOverCard(incidentOf({ model: { paramsB: 7 }, run: { training: true } }))).toBe(false);
    expect(staticOverCard(incidentOf({ model: { paramsB: 7 }, run: { training: true }, card: { gpuMemoryMiB: 81_920 } }))).toBe(true);
    expect(staticOverCard(incidentOf({ model: { paramsB: 7 }, run: { training: true, adapterTraining: true }, card: { gpuMemoryMiB: 24_576 } }))).toBe(false);
  });
});

describe('fp32 read from the failed request', () => {
  it.each([
    [896, /28672 × 8192 × 4 bytes/],
    [224, /14336 × 4096 × 4 bytes/],
    [172, /11008 × 4096 × 4 bytes/],
    [259, /18944 × 3584 × 4 bytes/],
    [3.91 * 1024, /128256 × 8192 × 4 bytes/],
  ])('%s MiB is one fp32 matrix', (mib, matrix) => {
    expect(fp32MatrixOf(mib)).toMatch(matrix);
  });
  it.each([448, 112, 86, 20, 1001])('%s MiB is no evidence of fp32 (a half-precision matrix, or no matrix at all)', (mib) => {
    expect(fp32MatrixOf(mib)).toBeUndefined();
  });
});

describe('PYTORCH_ALLOC_CONF and its alias', () => {
  it.each([
    ['PyTorch version: 2.11.0+cu128', [2, 11]],
    ['torch==2.10.1', [2, 10]],
    ['torch                     2.9.0+cu130', [2, 9]],
    ['pytorch version: 2.9.0+cu130', [2, 9]],
    ['torch.__version__ = "2.12.0"', [2, 12]],
  ])('%s', (line, v) => {
    expect(torchVersion(line)).toEqual(v);
  });
  it('paths and prose with the word torch are no version', () => {
    expect(torchVersion('File "/x/torch/nn/modules/module.py", line 1, in forward\nI use torch 24 hours a day')).toBeUndefined();
  });
  it.each([
    ['torch==2.11.0', 'PYTORCH_ALLOC_CONF'],
    ['torch==2.12.1', 'PYTORCH_ALLOC_CONF'],
    ['torch==2.10.0', 'PYTORCH_CUDA_ALLOC_CONF'],
    ['torch==2.9.1', 'PYTORCH_CUDA_ALLOC_CONF'],
    ['no version at all', 'PYTORCH_CUDA_ALLOC_CONF'],
  ])('%s advises %s', (text, name) => {
    expect(allocConfFacts(text).allocConfName).toBe(name);
  });
  it.each([
    ['export PYTORCH_ALLOC_CONF=expandable_segments:True', 'PYTORCH_ALLOC_CONF'],
    ['PYTORCH_CUDA_ALLOC_CONF="garbage_collection_threshold:0.6,expandable_segments:True" python train.py', 'PYTORCH_CUDA_ALLOC_CONF'],
    ['os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"', 'PYTORCH_CUDA_ALLOC_CONF'],
  ])('already set: %s', (text, name) => {
    expect(allocConfFacts(text).expandableAlreadySet).toBe(name);
  });
  it("PyTorch's own hint in the OOM message is advice, not a setting", () => {
    expect(
      allocConfFacts('If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.')
        .expandableAlreadySet,
    ).toBeUndefined();
  });
});
