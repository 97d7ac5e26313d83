// The leak detector runs only in the watch wing (issue 24 §1): every other folder, the digest CLI included,
// asks watch/findings.ts for findings over what it holds, so one place decides how samples become findings.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLayering, readSourceTree } from '../../scripts/layering.js';

describe('the detector', () => {
  it('is imported by src/watch/ only', () => {
    const { edges } = checkLayering(readSourceTree(resolve(import.meta.dirname, '../..')));
    const outside = edges.filter((e) => e.to === 'src/watch/detector.ts' && !e.from.startsWith('src/watch/'));
    expect(outside.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });
});
