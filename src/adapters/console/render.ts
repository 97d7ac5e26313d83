// Renders a Reply as plain terminal text: the console chat and the CLI's human output.
import type { Reply, ReplyTable } from '../../core/reply.js';
import { t } from '../../core/i18n.js';
import { plainMentions } from '../../core/mention.js';
import { displayWidth } from '../../core/text-width.js';

/**
 * C0 controls but \t and \n, DEL, and C1 controls (U+0080-U+009F, which a terminal may read as CSI,
 * OSC, DCS...). Text from hosts and pastes (`ps` command lines, log lines) passes through here, and a
 * terminal must only ever print it: no title changes, screen clears or cursor moves. A character
 * class, so linear.
 */
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** The text with every terminal control character removed (\t and \n kept). */
export const stripTerminalControls = (text: string): string => text.replace(TERMINAL_CONTROLS, '');

const MARK = { info: 'i', ok: '✓', warning: '!', error: '✗' } as const;

/** Columns padded by display width, not string length: a Chinese character takes two terminal columns. */
export function renderTable(table: ReplyTable): string {
  const widths = table.columns.map((c, i) => Math.max(displayWidth(c), ...table.rows.map((r) => displayWidth(r[i] ?? ''))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (c ?? '') + ' '.repeat(Math.max(0, widths[i] - displayWidth(c ?? ''))))
      .join('  ')
      .trimEnd();
  return [line(table.columns), line(widths.map((w) => '-'.repeat(w))), ...table.rows.map(line)].join('\n');
}

/** The reply as terminal text, without control characters (see stripTerminalControls). */
export function renderText(reply: Reply): string {
  return stripTerminalControls(renderUnsafeText(plainMentions(reply)));
}

function renderUnsafeText(reply: Reply): string {
  const out: string[] = [`[${MARK[reply.severity]}] ${reply.title}`];
  for (const s of reply.sections) {
    if (s.heading) out.push('', `${s.heading}:`);
    if (s.text) out.push(s.text);
    if (s.fields?.length) out.push(s.fields.map((f) => `  ${f.label}: ${f.value}`).join('\n'));
    if (s.table) out.push(renderTable(s.table));
    if (s.code)
      out.push(
        s.code
          .split('\n')
          .map((l) => `    ${l}`)
          .join('\n'),
      );
  }
  if (reply.files?.length) out.push('', ...reply.files.map((f) => `(attached: ${f.filename}, ${f.data.length} bytes)`));
  if (reply.footer) out.push('', `— ${reply.footer}`);
  if (reply.feedback) out.push(...(reply.footer ? [] : ['']), t(reply.feedback.locale, 'console.feedbackHint'));
  return out.join('\n');
}
