// The parsers' notes are data (src/readings/notes.ts): a key and its values, the catalogues imported by
// none of the parsers. Each key must be in both catalogues with exactly the values the parser gives, or a
// reply would show a note no language knows (or a placeholder left unfilled).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogue, missingKeys, resetMissingKeys, t } from '../../src/core/i18n.js';
import { render } from '../../src/core/message.js';
import { PROJECT_ROOT } from '../../src/core/paths.js';
import { parseSmiCsv } from '../../src/readings/nvidia-smi-csv.js';
import { skippedRowsNote, type ReadingNoteKey } from '../../src/readings/notes.js';
import { outOfRangeNote } from '../../src/readings/ranges.js';

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("the parsers' notes are the catalogue's messages", () => {
  it('every note key the parsers declare is in en and zh, with the placeholders the parser fills', () => {
    const declared = [...readFileSync(join(PROJECT_ROOT, 'src/readings/notes.ts'), 'utf8').matchAll(/'(note\.[\w.]+)'/g)].map((m) => m[1] as ReadingNoteKey);
    expect(declared.length).toBeGreaterThanOrEqual(5);
    const made = [
      ...[1, 2].flatMap((skipped) => [1, 2].map((rows) => skippedRowsNote({ skipped, what: 'GPU', columns: 4, first: 2, rows }))),
      outOfRangeNote('free', 'Mem', { field: 'total', value: 1e19, min: 0, max: 1, unit: 'bytes' }),
    ];
    expect(new Set(made.map((n) => n.key))).toEqual(new Set(declared));
    for (const note of made)
      for (const locale of ['en', 'zh'] as const) {
        const text = catalogue(locale)[note.key];
        expect(text, `${locale}:${note.key}`).toBeDefined();
        expect(placeholders(text), `${locale}:${note.key}`).toEqual(Object.keys(note.params).sort());
      }
  });

  it('a CSV table with a row that does not fit its header says so, as the catalogue says it in en and zh', () => {
    const csv = [
      'index, name, memory.used [MiB], memory.total [MiB]',
      '0, NVIDIA H100, 1000 MiB, 81559 MiB',
      '1, NVIDIA H100, 2000 MiB',
      '2, NVIDIA H100, 3000 MiB, 81559 MiB',
    ].join('\n');
    const notes = parseSmiCsv(csv).notes;
    const vars = { skipped: 1, what: 'GPU', columns: 4, first: 2, rows: 2 };
    expect(notes).toEqual([{ key: 'note.smi.skippedOne', params: vars }]);
    resetMissingKeys();
    expect(render('en', notes[0])).toBe(
      'Skipped 1 row of an nvidia-smi GPU CSV table that did not fit its 4-column header (first: data row 2); the other 2 rows were read.',
    );
    expect(render('zh', notes[0])).toBe(t('zh', 'note.smi.skippedOne', vars));
    expect(missingKeys()).toEqual([]);
  });
});
