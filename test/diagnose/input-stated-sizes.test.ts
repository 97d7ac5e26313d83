// One input's size and length as reports and tools state them (issue 23, F): an image size written after a verb
// ("input image size is [2436,1476]"), a clip's frame count stated as the threshold where the run stops working
// ("when I increase the frames more than 81"), and StableSR's tiled upscaler named by its sampling script, whose tiles
// are --vqgantile_size / --vqgantile_stride. Each is one input: tiles or a smaller input first, never the batch.
// Real threads (blind8 read split) beside synthetic variants (said so).
import { describe, expect, it } from 'vitest';
import { readInputSize } from '../../src/diagnose/levers/input-size.js';
import { readInputLength } from '../../src/diagnose/levers/input-length.js';
import { readTiledRestoration } from '../../src/diagnose/levers/tiled-restoration.js';
import { firstOfCase } from './corpus-case.js';

describe('an image size after a verb', () => {
  it('blind8/5624: SRGAN inference on one 2436x1476 image: the input first, not "the weights fill the card"', async () => {
    expect((await firstOfCase('blind8', '5624'))?.fixes[0]?.summary).toMatch(/^One input is large \(image size is \[2436,1476\]\)/);
  });
  it.each([
    ['input image size is [2436,1476]', 2436 * 1476],
    ['the image size was (2048, 1024)', 2048 * 1024],
    ['with an input size of [1536, 1536]', 1536 * 1536],
  ])('synthetic: "%s"', (text, pixels) => {
    expect(readInputSize(text).inputPixels).toBe(pixels);
  });
  it('synthetic control: a list of two counts after "size is" with no image word is no size', () => {
    expect(readInputSize('the vocab size is [3000, 4000]').inputPixels).toBeUndefined();
  });
});

describe('a frame count stated as a threshold', () => {
  it('blind8/5623: a Wan video workflow fails above 81 frames: the frames per pass first, not ComfyUI flags', async () => {
    expect((await firstOfCase('blind8', '5623'))?.fixes[0]?.summary).toMatch(/^One input is long \(frames more than 81\)/);
  });
  it.each([
    ['it OOMs when I increase the frames more than 81', 81],
    ['frame count above 121 crashes', 121],
    ['works until num_frames exceeds 97', 97],
    ['帧数超过81就爆显存', 81],
  ])('synthetic: "%s"', (text, n) => {
    expect(readInputLength(text)).toMatchObject({ inputLength: n, inputLengthKind: 'frames' });
  });
  it('synthetic control: frames per second above a rate is no clip length', () => {
    expect(readInputLength('the fps is above 30 frames per second').inputLength).toBeUndefined();
  });
});

describe('StableSR tiles', () => {
  it('blind8/5622: the tiled StableSR script still runs out: smaller tiles first', async () => {
    expect((await firstOfCase('blind8', '5622'))?.fixes[0]?.summary).toMatch(/tiles too large \(StableSR\)[\s\S]*--vqgantile_size/);
  });
  it.each([
    [
      'python scripts/sr_val_ddpm_text_T_vqganfin_oldcanvas_tile.py --vqgantile_size 1280 --vqgantile_stride 1000',
      'vqgantile_size=1280, vqgantile_stride=1000',
    ],
    ['StableSR upscale of one photo, CUDA out of memory', 'StableSR'],
    ['python scripts/sr_val_ddpm_text_T_vqganfin_old.py --init-img in --outdir out', 'StableSR'],
  ])('synthetic: "%s"', (text, why) => {
    expect(readTiledRestoration(text).tileWhy).toContain(why);
  });
});

describe("a clip's duration after its frame count is no frame setting", () => {
  it('synthetic: "1000 frames = 40 seconds at 720x1280": the frames are not 40', () => {
    expect(readInputSize('i get 1000 frames = 40 seconds at 720x1280').inputSizeSetting).toBe('720x1280');
  });
  it('synthetic control: a frames setting still multiplies the pixels', () => {
    expect(readInputSize('num_frames=49, height 480 width 720').inputPixels).toBe(49 * 480 * 720);
  });
});

describe('one evaluation input far larger than training: pieces of any kind of input', () => {
  it('blind8/5620: so-vits-svc inference asks 11 GiB for one audio file: segments, not only image tiles', async () => {
    expect((await firstOfCase('blind8', '5620'))?.fixes[0]?.summary).toMatch(/split it into segments[\s\S]*recording/);
  });
});
