// Notes the parsers add to a reading: the catalogue's key and its values, as plain data. The parsers
// import no i18n (issue 24 §4); the reply renders a note in the asker's language, a JSON output in
// English. Each key here must be in locales/*.json with these values: the compiler checks it where a
// note is rendered (a ReadingNote is a core Message), test/readings/notes-catalogue.test.ts at run time.
export type ReadingNoteKey = 'note.smi.skippedOneOne' | 'note.smi.skippedOne' | 'note.smi.skippedManyOne' | 'note.smi.skipped' | 'note.readings.outOfRange';

export interface ReadingNote {
  readonly key: ReadingNoteKey;
  readonly params: Readonly<Record<string, string | number>>;
}

/** Rows of an nvidia-smi CSV table that did not fit its header: one or more skipped, one or more read (the key by both counts). */
export function skippedRowsNote(params: { skipped: number; what: string; columns: number; first: number; rows: number }): ReadingNote {
  const key: ReadingNoteKey =
    params.skipped === 1
      ? params.rows === 1
        ? 'note.smi.skippedOneOne'
        : 'note.smi.skippedOne'
      : params.rows === 1
        ? 'note.smi.skippedManyOne'
        : 'note.smi.skipped';
  return { key, params };
}
