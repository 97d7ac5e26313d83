// /gpu help: what the bot does and every command it knows, in lines of at most 100 columns (a
// terminal, a phone's Slack), shown only to the person who asked.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t, type MessageKey } from '../src/core/i18n.js';
import { wrap } from '../src/core/text-width.js';
import { allCommands } from './index.js';

const HELP_WIDTH = 100;

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
