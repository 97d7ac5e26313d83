// The parsers' notes are made without the catalogues (src/readings/notes.ts): each template there must be
// the English catalogue's text under its key, or a reply would show a note no language knows.
import { describe, expect, it } from 'vitest';
import { catalogue, localize, t } from '../../src/core/i18n.js';
import { parseSmiCsv } from '../../src/readings/nvidia-smi-csv.js';
import { SKIPPED_ROWS_NOTES } from '../../src/readings/notes.js';
import { OUT_OF_RANGE_NOTE } from '../../src/readings/ranges.js';

describe("the parsers' notes are the catalogue's messages", () => {
  it('every template is locales/en.json under its key', () => {
    for (const template of [...Object.values(SKIPPED_ROWS_NOTES), OUT_OF_RANGE_NOTE]) {
      expect(catalogue('en')[template.key as keyof ReturnType<typeof catalogue>], template.key).toBe(template.en);
    }
  });

  it('a CSV table with a row that does not fit its header says so, and the note comes back in zh', () => {
    const csv = [
      'index, name, memory.used [MiB], memory.total [MiB]',
      '0, NVIDIA H100, 1000 MiB, 81559 MiB',
      '1, NVIDIA H100, 2000 MiB',
      '2, NVIDIA H100, 3000 MiB, 81559 MiB',
    ].join('\n');
    const notes = parseSmiCsv(csv).notes;
    const vars = { skipped: 1, what: 'GPU', columns: 4, first: 2, rows: 2 };
    expect(notes).toEqual([t('en', 'note.smi.skippedOne', vars)]);
    expect(localize('zh', notes[0])).toBe(t('zh', 'note.smi.skippedOne', vars));
  });
});
