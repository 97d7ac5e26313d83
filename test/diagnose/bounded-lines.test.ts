// The one line reader the evidence readers share (src/diagnose/lines.ts): its bounds hold while reading a hostile paste.
import { describe, expect, it } from 'vitest';
import { boundedLines } from '../../src/diagnose/lines.js';

describe('boundedLines', () => {
  it('yields each line, empty ones too, with or without a final newline', () => {
    expect([...boundedLines('a\n\nb', 10, 10)]).toEqual(['a', '', 'b']);
    expect([...boundedLines('a\nb\n', 10, 10)]).toEqual(['a', 'b']);
  });
  it('skips a line over the character cap (a flattened paste) and still counts it', () => {
    expect([...boundedLines(`x\n${'y'.repeat(11)}\nz`, 10, 10)]).toEqual(['x', 'z']);
    expect([...boundedLines(`${'y'.repeat(11)}\nz`, 1, 10)]).toEqual([]);
  });
  it('stops after the line cap without reading the rest of a huge paste', () => {
    const huge = 'line\n'.repeat(1_000_000);
    expect([...boundedLines(huge, 3, 10)]).toEqual(['line', 'line', 'line']);
  });
});
