// Tiles are an upscaler's memory lever (issue 23): super-resolution and restoration tools (Real-ESRGAN, Real-CUGAN,
// SwinIR) run one image at a time with no batch, so when the paste runs one of them (its name, its inference script)
// or states its tile setting, the first fix is smaller tiles (and half precision), never the batch. And a framework's
// own OOM message with its figures is the framework speaking whatever a script's logger prints before it ("Error CUDA
// out of memory. Tried to allocate ..."): an exception of another kind after it (the script going on after the caught
// OOM) does not take it back. Real threads from the read split blind6 beside synthetic variants written from the
// principle (said so below).
import { describe, expect, it } from 'vitest';
import { readTiledRestoration } from '../../src/diagnose/levers/tiled-restoration.js';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const TILES = /^One image is restored or upscaled in one piece or in tiles too large/;
const OOM = (tried: string, alloc: string) =>
  `RuntimeError: CUDA out of memory. Tried to allocate ${tried} (GPU 0; 8.00 GiB total capacity; ${alloc} already allocated; 0 bytes free; ${alloc} reserved in total by PyTorch)`;

describe('real threads (blind6, read split)', () => {
  it('3836 Real-CUGAN at tile=0 and tile=4, half=False: tiles first, quoting the settings', async () => {
    const d = await firstOfCase('blind6', '3836');
    expect(first(d)).toMatch(TILES);
    expect(first(d)).toMatch(/tile=0, tile=4, half=False/);
  });
  it('3837 Real-ESRGAN without --tile, its caught "Error CUDA out of memory" then an AttributeError: a CUDA OOM, tiles first', async () => {
    const d = await firstOfCase('blind6', '3837');
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(TILES);
    expect(first(d)).toMatch(/no --tile in the command/);
  });
});

describe('tile settings and tools as pastes state them (synthetic variants)', () => {
  it.each([
    ['a Real-ESRGAN command without --tile', 'python inference_realesrgan.py -n RealESRGAN_x4plus -i inputs -o results', /Real-ESRGAN; no --tile/],
    ['SwinIR with a tile size', 'python main_test_swinir.py --task real_sr --scale 4 --tile 640 --folder_lq testsets/x', /tile=640 \(SwinIR\)/],
    ['a Real-CUGAN config', 'model: up2x-latest-denoise3x.pth\ntile: 2\nhalf = False', /tile=2, half=False/],
    ['a tile size key', 'RealESRGANer(scale=4, model_path=p, tile_size=512, tile_pad=10, half=True)', /tile_size=512 \(Real-ESRGAN\)/],
  ])('%s', (_name, text, want) => {
    expect(readTiledRestoration(text).tileWhy).toMatch(want);
  });
  it('a tiling progress line ("Tile 3/16") is no setting, and a training run is not this lever', () => {
    expect(readTiledRestoration('\tTile 3/16\n\tTile 4/16').tileWhy).toBeUndefined();
    expect(readTiledRestoration('python realesrgan/train.py -opt options/train_realesrgan_x4plus.yml --auto_resume').tileWhy).toBeUndefined();
  });

  it('synthetic: Real-ESRGAN on Windows, one photo: tiles first, the batch never', async () => {
    const paste = ['python inference_realesrgan.py -n RealESRGAN_x4plus -i photo.jpg --outscale 4', 'Testing 0 photo', OOM('3.52 GiB', '7.02 GiB')].join('\n');
    const d = await diagnosePaste(paste);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(TILES);
    expect(first(d)).not.toMatch(/batch 1|Reduce the batch/);
  });
  it('synthetic: a tile setting already small still names smaller tiles and half precision', async () => {
    const d = await diagnosePaste(['upscale settings: tile=128, half=False', OOM('512.00 MiB', '7.02 GiB')].join('\n'));
    expect(first(d)).toMatch(TILES);
    expect(first(d)).toMatch(/tile=128, half=False[\s\S]*half precision/);
  });
  it('synthetic: an impossible request from an upscaler run whole is that image, and names tiles', async () => {
    const paste = [
      'python inference_realesrgan.py -n RealESRGAN_x4plus -i big.png',
      'Error CUDA out of memory. Tried to allocate 64.00 GiB (GPU 0; 12.00 GiB total capacity; 3.10 GiB already allocated; 8.20 GiB free; 3.20 GiB reserved in total by PyTorch)',
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(/one input far larger[\s\S]*Real-ESRGAN; no --tile[\s\S]*tiles/);
  });
  it('synthetic control: Real-ESRGAN training at batch_size_per_gpu 12 is not the tile lever', async () => {
    const paste = [
      'python realesrgan/train.py -opt options/train_realesrgan_x4plus.yml --auto_resume',
      'batch_size_per_gpu: 12',
      OOM('1.00 GiB', '6.90 GiB'),
    ].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(TILES);
  });
  it('synthetic control: another process holding the card comes before tiles', async () => {
    const paste = [
      'python inference_realesrgan.py -n RealESRGAN_x4plus -i inputs',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 120.00 MiB is free. Process 4242 has 20.10 GiB memory in use. Including non-PyTorch memory, this process has 3.40 GiB memory in use. Of the allocated memory 2.90 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.',
    ].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(TILES);
  });
});

describe("a framework's OOM message behind a logger's prefix is no sentence (synthetic variants)", () => {
  it.each([
    [
      '"Error " before it',
      'Error CUDA out of memory. Tried to allocate 1.12 GiB (GPU 0; 4.00 GiB total capacity; 2.41 GiB already allocated; 0 bytes free; 2.41 GiB reserved in total by PyTorch)',
    ],
    [
      '"[ERROR]" before it',
      '[ERROR] CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 5.10 GiB already allocated; 1.20 GiB free; 5.20 GiB reserved in total by PyTorch)',
    ],
    [
      '"failed: " before it',
      'upscale failed: CUDA out of memory. Tried to allocate 600.00 MiB (GPU 1; 11.00 GiB total capacity; 9.80 GiB already allocated; 300.00 MiB free; 9.90 GiB reserved in total by PyTorch)',
    ],
  ])('%s, then an AttributeError from the code after it: still a CUDA OOM', async (_name, line) => {
    const paste = [
      line,
      'Traceback (most recent call last):',
      '  File "run.py", line 9, in <module>',
      '    out = model.output',
      "AttributeError: 'Upsampler' object has no attribute 'output'",
    ].join('\n');
    expect((await diagnosePaste(paste))?.category).toBe('cuda_oom');
  });
  it('control: a sentence about an OOM before a KeyError stays taken back', async () => {
    const paste = [
      'I got CUDA out of memory yesterday, now this:',
      'Traceback (most recent call last):',
      '  File "run.py", line 3, in <module>',
      "KeyError: 'state_dict'",
    ].join('\n');
    expect(await diagnosePaste(paste)).toBeUndefined();
  });
});
