// /gpu help: what the bot does and every command it knows, in lines of at most 100 columns (a
// terminal, a phone's Slack), shown only to the person who asked.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t, type MessageKey } from '../src/core/i18n.js';
import { allCommands } from './index.js';

export const HELP_WIDTH = 100;

const WIDE_CHARS =
  '\\u1100-\\u115f\\u2e80-\\u303e\\u3041-\\u33ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\ua000-\\ua4cf\\uac00-\\ud7a3\\uf900-\\ufaff\\ufe30-\\ufe4f\\uff00-\\uff60\\uffe0-\\uffe6\\u{1f300}-\\u{1faff}';
const WIDE = new RegExp(`[${WIDE_CHARS}]`, 'u');
/** One wide character (with the closing punctuation that must not start a line), or a run of narrow ones. */
const PIECES = new RegExp(`[${WIDE_CHARS}][，。：；、）！？」』]*|[^${WIDE_CHARS}]+`, 'gu');

/** Columns `s` takes in a terminal: CJK characters, fullwidth forms and emoji take two, everything else one. */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += WIDE.test(ch) ? 2 : 1;
  return w;
}

/**
 * Words of `text` in lines of at most `width` display columns, each after `indent`; breaks at spaces and
 * `|`, and between CJK characters (Chinese has no spaces): such a piece joins its neighbour without a blank.
 */
export function wrap(text: string, width: number, indent = ''): string[] {
  const pieces: { w: string; glued: boolean }[] = [];
  for (const word of text.split(/(?<=\|)|\s+/).filter(Boolean)) {
    const parts = word.match(PIECES) ?? [word];
    parts.forEach((w, i) => pieces.push({ w, glued: i > 0 }));
  }
  const lines: string[] = [];
  let line = '';
  for (const { w, glued } of pieces) {
    const sep = line === '' || glued || line.endsWith('|') || w.startsWith('|') ? '' : ' ';
    if (line !== '' && displayWidth(indent) + displayWidth(line) + sep.length + displayWidth(w) > width) {
      lines.push(indent + line);
      line = w;
    } else line += sep + w;
  }
  if (line) lines.push(indent + line);
  return lines;
}

export default defineCommand({
  name: 'help',
  summary: t('en', 'cmd.help.summary'),
  usage: 'help',
  options: z.object({}).passthrough(),
  run(_options, ctx) {
    // Code blocks are indented by 4 in a terminal: their lines leave room for it.
    const width = HELP_WIDTH - 4;
    const lines = allCommands().flatMap((c) => [
      ...wrap(`/gpu ${c.usage}`, width),
      ...wrap(t(ctx.locale, `cmd.${c.name}.summary` as MessageKey), width, '    '),
    ]);
    return Promise.resolve({
      title: 'gpu-doctor',
      severity: 'info',
      visibility: 'asker',
      sections: [{ text: wrap(t(ctx.locale, 'help.intro'), HELP_WIDTH).join('\n') }, { code: lines.join('\n') }],
    });
  },
});
