// Renders a Reply as Slack Block Kit within its limits: 50 blocks, 3000 characters per section text,
// 150 per header, 10 fields of 2000. Long tables are split by rows (header repeated); beyond
// INLINE_TABLE_ROWS rows, or when the blocks run out, the full text goes as an attached file and the
// message says so.
import { t, type Locale } from '../../core/i18n.js';
import type { Reply, ReplyFile } from '../../core/reply.js';
import { linkMentions, resolveMentions, type MentionStyle } from '../../core/mention.js';
import { SLACK_LIMITS as L, INLINE_TABLE_ROWS, chunkLines, chunkTable, cutLine, replyAsFile, tableAsFile } from '../render-limits.js';

/** A Block Kit text object. */
export interface TextObject {
  type: 'mrkdwn' | 'plain_text';
  text: string;
  emoji?: boolean;
}
/** A Block Kit block: the parts the limits concern are typed, the rest (buttons, accessories) passes through. */
export interface Block {
  type: string;
  text?: TextObject;
  fields?: TextObject[];
  elements?: Record<string, unknown>[];
  [k: string]: unknown;
}

export interface SlackMessage {
  text: string;
  blocks: Block[];
  files: ReplyFile[];
}

const ICON = { info: ':information_source:', ok: ':white_check_mark:', warning: ':warning:', error: ':x:' } as const;

/** Slack's three control characters in mrkdwn/text. */
export const escapeMrkdwn = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
export const unescapeSlack = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

const section = (text: string): Block => ({ type: 'section', text: { type: 'mrkdwn', text } });
const context = (text: string): Block => ({ type: 'context', elements: [{ type: 'mrkdwn', text: cutLine(text, L.contextText) }] });
const FENCE = 6; // ``` + ```

/** A person as Slack writes them: a user mention where the reply links them (it notifies them), else the name. */
const slackPerson: MentionStyle = (m) => (m.link && m.slack && /^[UW][A-Z0-9]{2,20}$/.test(m.slack) ? `<@${m.slack}>${escapeMrkdwn(m.after ?? '')}` : null);

// 👍 / 👎 under a diagnosis (its clicks are handled in feedback.ts).
export const FEEDBACK_BLOCK_ID = 'gpu_doctor_feedback';
export const FEEDBACK_ACTIONS = { up: 'feedback_up', down: 'feedback_down' } as const;

/** The buttons under a diagnosis, labelled in the reply's language. */
export function feedbackBlock(id: string, loc?: Locale): Block {
  const button = (vote: 'up' | 'down', text: string) => ({
    type: 'button',
    action_id: FEEDBACK_ACTIONS[vote],
    text: { type: 'plain_text', text, emoji: true },
    value: id,
  });
  return {
    type: 'actions',
    block_id: FEEDBACK_BLOCK_ID,
    elements: [button('up', `👍 ${t(loc, 'feedback.button.up')}`), button('down', `👎 ${t(loc, 'feedback.button.down')}`)],
  };
}

export function renderSlack(given: Reply): SlackMessage {
  // People: plain names in tables, code, titles and footers; tokens left in text become <@U…> after escaping.
  const reply = resolveMentions(given, slackPerson);
  const link = (t: string) => linkMentions(t, reply, slackPerson);
  const blocks: Block[] = [];
  const files: ReplyFile[] = [...(reply.files ?? [])];
  blocks.push({ type: 'header', text: { type: 'plain_text', text: cutLine(reply.title, L.headerText), emoji: true } });
  let tableNo = 0;
  for (const s of reply.sections) {
    if (s.heading) blocks.push(section(link(`*${cutLine(escapeMrkdwn(s.heading), L.sectionText - 2)}*`)));
    if (s.text) for (const c of chunkLines(escapeMrkdwn(s.text), L.sectionText)) blocks.push(section(link(c)));
    if (s.fields?.length) {
      for (let i = 0; i < s.fields.length; i += L.fieldsPerSection) {
        blocks.push({
          type: 'section',
          fields: s.fields
            .slice(i, i + L.fieldsPerSection)
            .map((f) => ({ type: 'mrkdwn', text: link(cutLine(`*${escapeMrkdwn(f.label)}*\n${escapeMrkdwn(f.value)}`, L.fieldText)) })),
        });
      }
    }
    if (s.table) {
      tableNo++;
      const total = s.table.rows.length;
      const { chunks, rowsShown } = chunkTable(
        { columns: s.table.columns, rows: s.table.rows.map((r) => r.map(escapeMrkdwn)) },
        L.sectionText - FENCE,
        INLINE_TABLE_ROWS,
      );
      for (const c of chunks) blocks.push(section('```' + c + '```'));
      if (rowsShown < total) {
        const name = `table-${tableNo}.txt`;
        files.push(tableAsFile(s.table, name));
        blocks.push(context(t(reply.locale, 'render.tableCutAttached', { shown: rowsShown, total, name })));
      }
    }
    if (s.code) for (const c of chunkLines(escapeMrkdwn(s.code), L.sectionText - FENCE)) blocks.push(section('```' + c + '```'));
  }
  if (reply.footer) blocks.push(context(escapeMrkdwn(reply.footer)));
  // 👍 / 👎 buttons take the last block.
  const room = reply.feedback ? L.blocks - 1 : L.blocks;
  if (blocks.length > room) {
    blocks.length = room - 1;
    const full = replyAsFile(reply);
    files.push(full);
    blocks.push(context(t(reply.locale, 'render.slackLong', { name: full.filename })));
  }
  if (reply.feedback) blocks.push(feedbackBlock(reply.feedback.id, reply.feedback.locale));
  // The fallback text is mrkdwn too (notifications, clients without blocks): escaped like the blocks,
  // so a title never carries a <!channel> or <@U...> mention.
  const text = cutLine(`${ICON[reply.severity]} ${escapeMrkdwn(reply.title)}`, L.fallbackText);
  return { text, blocks, files };
}

/** Checks a message against Block Kit limits; returns the problems (empty = fine). Used by tests. */
export function blockKitProblems(blocks: Block[]): string[] {
  const p: string[] = [];
  if (blocks.length > L.blocks) p.push(`${blocks.length} blocks > ${L.blocks}`);
  blocks.forEach((b, i) => {
    if (b.type === 'header' && (b.text?.text.length ?? 0) > L.headerText) p.push(`block ${i}: header ${b.text?.text.length} chars`);
    if (b.type === 'section') {
      if (b.text && b.text.text.length > L.sectionText) p.push(`block ${i}: section ${b.text.text.length} chars`);
      if (b.fields && b.fields.length > L.fieldsPerSection) p.push(`block ${i}: ${b.fields.length} fields`);
      for (const f of b.fields ?? []) if (f.text.length > L.fieldText) p.push(`block ${i}: field ${f.text.length} chars`);
      if (!b.text && !b.fields) p.push(`block ${i}: empty section`);
      if (b.text && b.text.text.length === 0) p.push(`block ${i}: empty text`);
    }
    if (b.type === 'context') {
      for (const e of b.elements ?? []) if (typeof e.text === 'string' && e.text.length > L.contextText) p.push(`block ${i}: context ${e.text.length}`);
    }
  });
  return p;
}
