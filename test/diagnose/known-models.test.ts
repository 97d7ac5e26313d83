// knowledge/models.json: the parameter counts of models whose names carry no size. Every entry is
// sourced and compiles in re2; a name with its size in it wins over the table.
import { readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { knownGpuMemoryGiB, knownModelParamsB, loadKnownGpus, loadKnownModels, modelParamsB, zeroStage } from '../../src/diagnose/settings.js';

const FILE = resolve(import.meta.dirname, '../../knowledge/models.json');

describe('knowledge/models.json', () => {
  it('every entry has a name, a re2 pattern, a positive count and a source URL', () => {
    const doc = JSON.parse(readFileSync(FILE, 'utf8')) as { models: { source: string }[] };
    expect(loadKnownModels(FILE)).toHaveLength(doc.models.length);
    for (const m of doc.models) expect(m.source).toMatch(/^https:\/\//);
  });

  it('a broken entry is refused, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-models-'));
    const file = join(dir, 'models.json');
    writeFileSync(
      file,
      JSON.stringify({
        models: [
          { name: 'x', pattern: 'x', params_b: 1, source: 'https://x' },
          { name: 'y', pattern: 'y', params_b: 0 },
        ],
      }),
    );
    expect(() => loadKnownModels(file)).toThrow(/models\.1: needs name, pattern, params_b > 0 and a source URL/);
  });

  it.each([
    ['fine-tune whisper large on a GPU with 24gb', 1.55],
    ['openai/whisper-large-v3-turbo', 0.809],
    ['whisper_medium.pt', 0.769],
    ['pipe = FluxPipeline.from_pretrained("black-forest-labs/FLUX.1-dev")', 12],
    ['mistralai/Mixtral-8x7B-Instruct-v0.1', 46.7],
  ])('%s -> %sB', (text, b) => {
    expect(knownModelParamsB(text)).toBe(b);
  });

  it('a size in the name or in prose wins over the table; an unknown model gives none', () => {
    expect(modelParamsB('whisper large, the 7B model', undefined)).toBe(7);
    expect(modelParamsB('Qwen-VL-Chat-Int4-3B', undefined)).toBe(3);
    expect(knownModelParamsB('resnet50 on imagenet')).toBeUndefined();
  });
});

describe('the ZeRO stage a paste states', () => {
  it.each([
    ['"zero_optimization": {\n  "stage": 2,\n  "offload_optimizer": {"device": "none"}\n}\nzero3 was tried before', 2],
    ['deepspeed --num_gpus 8 train.py --deepspeed ds_z3_config.json', 3],
    ['--zero_stage 1', 1],
    ['使用Deepspeed ZeRO3配置会出现报错，后面改用Deepspeed ZeRO2', 2],
    ['zero_stage: 0', 0],
  ])('%s -> %s', (text, stage) => {
    expect(zeroStage(text)).toBe(stage);
  });
  it('none stated: none; a version number is not a stage', () => {
    expect(zeroStage('deepspeed==0.12.3, zero redundancy optimizer')).toBeUndefined();
  });
});

describe('knowledge/gpus.json: cards whose name fixes their memory', () => {
  it('every entry compiles in re2 with a size; a Ti is tried before its plain card', () => {
    const gpus = loadKnownGpus();
    expect(gpus.length).toBeGreaterThan(15);
    expect(knownGpuMemoryGiB('Device 0: NVIDIA GeForce GTX 1050 Ti, compute capability 6.1')).toBe(4);
    expect(knownGpuMemoryGiB('GPU: GTX 1080 Ti')).toBe(11);
    expect(knownGpuMemoryGiB('GPU: GTX 1080')).toBe(8);
    expect(knownGpuMemoryGiB('3 x RTX 4090')).toBe(24);
  });
  it('a card sold in several sizes gives none (V100 16/32 GB, A100 40/80 GB)', () => {
    expect(knownGpuMemoryGiB('8x V100, A100 nodes')).toBeUndefined();
  });
});
