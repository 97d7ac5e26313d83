// Terminal columns and wrapping by them (src/core/text-width.ts): what /gpu help's 100-column lines rest on.
import { describe, expect, it } from 'vitest';
import { displayWidth, wrap } from '../../src/core/text-width.js';

describe('text width in terminal columns', () => {
  it('CJK characters, fullwidth forms and emoji take two columns, everything else one', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('诊断 ab')).toBe(7);
    expect(displayWidth('ＡＢ')).toBe(4);
    expect(displayWidth('👍 ok')).toBe(5);
  });

  it('wraps at blanks and |, between CJK characters without a blank, never starting a line with closing punctuation', () => {
    expect(wrap('one two three four', 9)).toEqual(['one two', 'three', 'four']);
    expect(wrap('a|b|c', 3)).toEqual(['a|', 'b|c']);
    const lines = wrap('显存不足，请减小批量。', 8, '  ');
    expect(lines).toEqual(['  显存不', '  足，请', '  减小批', '  量。']);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(8);
  });
});
