// A process table pasted into an issue: GitHub's Markdown leaves a blank line after the header rule.
// The rows after it are still the table (real paste: yyliu01/PS-MT#20, kept as a knowledge example).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseReadings } from '../../src/readings/index.js';

const file = resolve(import.meta.dirname, '../../knowledge/ranks-open-context-on-one-gpu/match/ps-mt-20-ddp-ranks-on-gpu5.log');

describe('nvidia-smi process table pasted with a blank line inside', () => {
  it('keeps every row after the blank line, with its GPU, pid and memory', () => {
    const r = parseReadings(readFileSync(file, 'utf8'));
    expect(r.processes.map((p) => [p.gpuIndex, p.pid, p.memoryMiB])).toEqual([
      [5, 26598, 2885],
      [5, 26599, 1387],
      [5, 26600, 1387],
      [5, 26601, 1387],
      [6, 26599, 2889],
      [7, 26600, 2889],
      [8, 26601, 2869],
    ]);
  });

  it('a line of text still ends the table: rows after it are not processes of the table', () => {
    const text = readFileSync(file, 'utf8').replace('|    6   N/A', 'some prose here\n|    6   N/A');
    expect(parseReadings(text).processes.map((p) => p.gpuIndex)).toEqual([5, 5, 5, 5]);
  });
});
