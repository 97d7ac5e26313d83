// Notes the parsers add to a reading, made here as plain English text from the catalogue's English
// template, key beside it: the parsers import no i18n (issue 24 §4), the reply shows a note in the
// asker's language (localize() finds the key again), and test/readings/notes-catalogue.test.ts checks
// that every template here is the catalogue's.
export interface NoteTemplate {
  /** The key in locales/*.json. */
  key: string;
  /** locales/en.json's text under that key. */
  en: string;
}

export function noteText(template: NoteTemplate, vars: Record<string, string | number>): string {
  return template.en.replace(/\{(\w+)\}/g, (whole, name: string) => (vars[name] === undefined ? whole : String(vars[name])));
}

/** Rows of an nvidia-smi CSV table that did not fit its header: one or more skipped, one or more read. */
export const SKIPPED_ROWS_NOTES = {
  oneSkippedOneRead: {
    key: 'note.smi.skippedOneOne',
    en: 'Skipped {skipped} row of an nvidia-smi {what} CSV table that did not fit its {columns}-column header (first: data row {first}); the other {rows} row was read.',
  },
  oneSkipped: {
    key: 'note.smi.skippedOne',
    en: 'Skipped {skipped} row of an nvidia-smi {what} CSV table that did not fit its {columns}-column header (first: data row {first}); the other {rows} rows were read.',
  },
  manySkippedOneRead: {
    key: 'note.smi.skippedManyOne',
    en: 'Skipped {skipped} rows of an nvidia-smi {what} CSV table that did not fit its {columns}-column header (first: data row {first}); the other {rows} row was read.',
  },
  manySkipped: {
    key: 'note.smi.skipped',
    en: 'Skipped {skipped} rows of an nvidia-smi {what} CSV table that did not fit its {columns}-column header (first: data row {first}); the other {rows} rows were read.',
  },
} as const satisfies Record<string, NoteTemplate>;
