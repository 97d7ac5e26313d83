// Samples packed as columns for a chart child (src/watch/chart-samples.ts): what a child unpacks is what
// the store gave, for every kind of sample and its nulls, whether the samples came as one array or one
// at a time from a backend read in batches (the packer grows its columns as they come).
import { describe, expect, it } from 'vitest';
import { packSamples, packedSamplesSince, SamplePacker, unpackSample } from '../../src/watch/chart-samples.js';
import type { Sample } from '../../src/watch/types.js';

const T0 = Date.parse('2026-11-20T00:00:00Z');

function mixed(n: number): Sample[] {
  const out: Sample[] = [];
  for (let i = 0; i < n; i++) {
    const ts = T0 + i * 60_000;
    const host = i % 3 === 0 ? 'gpu01' : 'gpu02';
    if (i % 5 === 0) out.push({ ts, host, kind: 'host', memTotalBytes: 2 ** 40, memAvailableBytes: 2 ** 39 - i });
    else if (i % 5 === 1) out.push({ ts, host, gpu: i % 8, gpuTotalMiB: 81_559, gpuUsedMiB: 1000 + i, utilizationPct: i % 7 === 0 ? null : 50 });
    else
      out.push({
        ts: new Date(ts).toISOString(),
        host,
        gpu: i % 8,
        gpuTotalMiB: 81_559,
        gpuUsedMiB: 2000 + i,
        utilizationPct: 90,
        pid: 1000 + (i % 11),
        processStart: new Date(T0 - 3_600_000).toISOString(),
        user: i % 2 ? 'alice' : 'bob',
        command: `python train.py --run ${i % 4}`,
        processMiB: i % 9 === 0 ? null : 500 + i,
      });
  }
  return out;
}

/** A sample as a store compares it: times in epoch ms. */
function asStored(s: Sample): Sample {
  const ms = (t: string | number) => (typeof t === 'number' ? t : Date.parse(t));
  const out = { ...s, ts: ms(s.ts) } as Sample & { processStart?: string | number };
  if ('processStart' in s && s.processStart !== undefined) out.processStart = ms(s.processStart);
  return out;
}

describe('samples packed for a chart child', () => {
  it('unpacks every sample as given, one at a time through a packer that starts with room for one', () => {
    const samples = mixed(3_000);
    const packer = new SamplePacker(1);
    for (const s of samples) packer.add(s);
    const p = packer.finish();
    expect(p.count).toBe(samples.length);
    expect(p.ts.length).toBe(samples.length);
    for (let i = 0; i < samples.length; i++) expect(unpackSample(p, i)).toEqual(asStored(samples[i]));
    // One entry per distinct string.
    expect(new Set(p.strings).size).toBe(p.strings.length);
  });

  it('packs an array to the same columns, and reads one host back from a given time', async () => {
    const samples = mixed(22_000);
    const packer = new SamplePacker();
    for (const s of samples) packer.add(s);
    const streamed = packer.finish();
    const whole = await packSamples(samples);
    expect(whole).toEqual(streamed);
    const since = T0 + 15_000 * 60_000;
    const back = [...packedSamplesSince(whole, since, 'gpu01')];
    const expected = samples.filter((s) => s.host === 'gpu01' && (asStored(s).ts as number) >= since).map(asStored);
    expect(back).toEqual(expected);
    expect([...packedSamplesSince(whole, since, 'nohost')]).toEqual([]);
  });

  it('packs nothing to empty columns', async () => {
    const p = new SamplePacker().finish();
    expect(p.count).toBe(0);
    expect(p.ts.length).toBe(0);
    expect((await packSamples([])).count).toBe(0);
  });
});
