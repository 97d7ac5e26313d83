// Shared helpers for chat renderers: split text by lines under a character budget (a line is only cut
// when it alone is too long, and then visibly), and lay out tables as monospace rows.
import type { Reply, ReplyTable } from '../core/reply.js';
import { renderTable, renderText } from './console/render.js';

export const SLACK_LIMITS = {
  sectionText: 3000,
  blocks: 50,
  headerText: 150,
  fieldText: 2000,
  fieldsPerSection: 10,
  contextText: 3000,
  fallbackText: 4000,
} as const;
export const DISCORD_LIMITS = {
  content: 2000,
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footer: 2048,
  total: 6000,
} as const;

/** Rows of a table beyond this go to an attached file (chat tables stay readable). */
export const INLINE_TABLE_ROWS = 40;

export function cutLine(line: string, max: number): string {
  return line.length <= max ? line : line.slice(0, Math.max(0, max - 1)) + '…';
}

/** Splits text into chunks of at most `max` characters, at line breaks. */
export function chunkLines(text: string, max: number): string[] {
  const chunks: string[] = [];
  let cur = '';
  for (const raw of text.split('\n')) {
    const line = cutLine(raw, max);
    if (cur === '') cur = line;
    else if (cur.length + 1 + line.length <= max) cur += '\n' + line;
    else {
      chunks.push(cur);
      cur = line;
    }
  }
  if (cur !== '' || chunks.length === 0) chunks.push(cur);
  return chunks;
}

/** The table's monospace lines: [header, rule, ...rows]. */
export function tableLines(table: ReplyTable): { head: string[]; rows: string[] } {
  const lines = renderTable(table).split('\n');
  return { head: lines.slice(0, 2), rows: lines.slice(2) };
}

/**
 * Splits a table into monospace chunks of at most `max` characters each (header repeated), never
 * mid-row. Returns the chunks and how many rows they hold.
 */
export function chunkTable(table: ReplyTable, max: number, maxRows = Infinity): { chunks: string[]; rowsShown: number } {
  const { head, rows } = tableLines(table);
  // The header (2 lines) and at least one row must fit in a chunk: over-wide lines are cut visibly (…).
  const lineMax = Math.floor((max - 2) / 3);
  const header = head.map((l) => cutLine(l, lineMax)).join('\n');
  const chunks: string[] = [];
  let cur = header;
  let curRows = 0;
  let shown = 0;
  for (const r of rows.slice(0, maxRows)) {
    const row = cutLine(r, lineMax);
    if (cur.length + 1 + row.length > max && curRows > 0) {
      chunks.push(cur);
      cur = header;
      curRows = 0;
    }
    cur += '\n' + row;
    curRows++;
    shown++;
  }
  chunks.push(cur);
  return { chunks, rowsShown: shown };
}

/** The whole reply as plain text, for when it must go out as a file. */
export function replyAsFile(reply: Reply, filename = 'gpu-doctor-reply.txt') {
  return { filename, contentType: 'text/plain', data: Buffer.from(renderText(reply) + '\n', 'utf8') };
}

export function tableAsFile(table: ReplyTable, filename: string) {
  return { filename, contentType: 'text/plain', data: Buffer.from(renderTable(table) + '\n', 'utf8') };
}
