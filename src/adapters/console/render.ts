// Renders a Reply as plain terminal text: the console chat and the CLI's human output.
import type { Reply, ReplyTable } from '../../core/reply.js';

const MARK = { info: 'i', ok: '✓', warning: '!', error: '✗' } as const;

export function renderTable(table: ReplyTable): string {
  const widths = table.columns.map((c, i) => Math.max(c.length, ...table.rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (c ?? '').padEnd(widths[i])).join('  ').trimEnd();
  return [line(table.columns), line(widths.map((w) => '-'.repeat(w))), ...table.rows.map(line)].join('\n');
}

export function renderText(reply: Reply): string {
  const out: string[] = [`[${MARK[reply.severity]}] ${reply.title}`];
  for (const s of reply.sections) {
    if (s.heading) out.push('', `${s.heading}:`);
    if (s.text) out.push(s.text);
    if (s.fields?.length) out.push(s.fields.map((f) => `  ${f.label}: ${f.value}`).join('\n'));
    if (s.table) out.push(renderTable(s.table));
    if (s.code) out.push(s.code.split('\n').map((l) => `    ${l}`).join('\n'));
  }
  if (reply.files?.length) out.push('', ...reply.files.map((f) => `(attached: ${f.filename}, ${f.data.length} bytes)`));
  if (reply.footer) out.push('', `— ${reply.footer}`);
  return out.join('\n');
}
