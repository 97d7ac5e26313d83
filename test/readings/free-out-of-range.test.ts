// Issue 22 item 7, in process: a `free` Mem row with a value no real host has is left out and named in
// the notes, and the output before it still counts. out-of-range.test.ts checks the same through the CLI
// (a child process, which mutation testing cannot switch mutants in); this twin runs parseFree itself,
// on the real capture test/fixtures/readings/free/17-free-b-6gb.txt with its total changed.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFree } from '../../src/readings/free.js';
import type { ReadingNote } from '../../src/readings/notes.js';

const FREE_B = readFileSync(resolve(import.meta.dirname, '../fixtures/readings/free/17-free-b-6gb.txt'), 'utf8');
const from = 'Mem:     6249144320 ';
const HUGE = FREE_B.replace(from, 'Mem:     10000000000000000000 ');
// The parser names the row as data (key and values); the reply renders it (test/readings/notes-catalogue.test.ts).
const note = (row: string, field: string, value: string, range: string): ReadingNote => ({
  key: 'note.readings.outOfRange',
  params: { tool: 'free', row, field, value, range },
});

describe('parseFree: a Mem row out of range is left out and named', () => {
  it('an earlier output counts; the bad one is named by its tool, row label, field, value and range', () => {
    expect(FREE_B.split(from)).toHaveLength(2);
    const notes: ReadingNote[] = [];
    const r = parseFree(`$ free -b\n${FREE_B}\n$ free -b\n${HUGE}`, undefined, notes);
    expect(r?.totalBytes).toBe(6249144320);
    expect(notes).toEqual([note('Mem', 'total', '10000000000000000000 bytes', '0..1125899906842624 bytes')]);
  });

  it('alone, the bad output gives no reading, only its note; without a notes list it is still left out', () => {
    const notes: ReadingNote[] = [];
    expect(parseFree(`$ free -b\n${HUGE}`, undefined, notes)).toBeNull();
    expect(notes).toHaveLength(1);
    expect(parseFree(`$ free -b\n${HUGE}`)).toBeNull();
  });

  it('a translated row label is the row named', () => {
    const notes: ReadingNote[] = [];
    parseFree(`$ free -b\n${HUGE.replace('Mem:', 'Память:')}`, undefined, notes);
    expect(notes).toEqual([note('Память', 'total', '10000000000000000000 bytes', '0..1125899906842624 bytes')]);
  });
});
