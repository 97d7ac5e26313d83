// /gpu help: what the bot does and every command it knows, in lines of at most 100 columns (a
// terminal, a phone's Slack), shown only to the person who asked.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { allCommands } from './index.js';

export const HELP_WIDTH = 100;

/** Words of `text` in lines of at most `width` columns, each after `indent`; breaks at spaces and `|`. */
export function wrap(text: string, width: number, indent = ''): string[] {
  const words = text.split(/(?<=\|)|\s+/).filter(Boolean);
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    const sep = line === '' || line.endsWith('|') || w.startsWith('|') ? '' : ' ';
    if (line !== '' && indent.length + line.length + sep.length + w.length > width) {
      lines.push(indent + line);
      line = w;
    } else line += sep + w;
  }
  if (line) lines.push(indent + line);
  return lines;
}

export default defineCommand({
  name: 'help',
  summary: 'What gpu-doctor can do',
  usage: 'help',
  options: z.object({}).passthrough(),
  run() {
    // Code blocks are indented by 4 in a terminal: their lines leave room for it.
    const width = HELP_WIDTH - 4;
    const lines = allCommands().flatMap((c) => [...wrap(`/gpu ${c.usage}`, width), ...wrap(c.summary, width, '    ')]);
    return Promise.resolve({
      title: 'gpu-doctor',
      severity: 'info',
      visibility: 'asker',
      sections: [
        { text: wrap('Paste a training log or traceback and I reply with the diagnosis and a fix computed from its numbers.', HELP_WIDTH).join('\n') },
        { code: lines.join('\n') },
      ],
    });
  },
});
