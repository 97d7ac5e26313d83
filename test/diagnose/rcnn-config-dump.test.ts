// R-CNN trainers (mx-rcnn, py-faster-rcnn) print their config as a dict before training: 'BATCH_IMAGES' is the images
// per GPU and 'SCALES' the (short, long) training scale. Read there, a batch already 1 with a scale above the usual
// makes the image size the first lever, not "one step at batch 1" (issue 23 items 1-2; settings.ts, levers/input-size.ts).
// The real example is a case of the read split blind7 (a real public thread, its cases.json); the others are synthetic
// variants written from those configs' printed form, and say so in their names.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TEST_TIMEOUT = 180_000;
const dump = (images: number, scale: string) =>
  `cudaMalloc failed: out of memory\nCalled with argument: Namespace(dataset='PascalVOC', gpus='0', network='resnet', prefix='model/e2e')\n{'TRAIN': {'BATCH_IMAGES': ${images},\n'BATCH_ROIS': 128,\n'END2END': True},\n'SCALES': [${scale}]}\n`;

describe("an R-CNN config dump's BATCH_IMAGES and SCALES", () => {
  it(
    'real: blind7/3966 (mx-rcnn VGG16 at BATCH_IMAGES 1, SCALES (600, 1000) on a 4 GB GTX 980)',
    async () => {
      const d = await firstOfCase('blind7', '3966');
      expect(d!.facts.batch).toBe(1);
      expect(d!.fixes[0].summary).toMatch(/^One input is large \(SCALES.*600, 1000.*Lower the image size \/ resolution first/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: another scale at one image per GPU; a control with two images per GPU reads the batch as 2',
    async () => {
      const one = await diagnosePaste(dump(1, '(800, 1333)'));
      expect(one!.facts.batch).toBe(1);
      expect(one!.fixes[0].summary).toMatch(/^One input is large \(SCALES.*800, 1333/);
      const two = await diagnosePaste(dump(2, '(800, 1333)'));
      expect(two!.facts.batch).toBe(2);
    },
    TEST_TIMEOUT,
  );
});
