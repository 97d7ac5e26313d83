// /gpu help: what the bot does and every command it knows.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { allCommands } from './index.js';

export default defineCommand({
  name: 'help',
  summary: 'What gpu-doctor can do',
  usage: 'help',
  options: z.object({}).passthrough(),
  run() {
    const rows = allCommands().map((c) => [`/gpu ${c.usage}`, c.summary]);
    return Promise.resolve({
      title: 'gpu-doctor',
      severity: 'info',
      sections: [
        { text: 'Paste a training log or traceback and I reply with the diagnosis and a fix computed from its numbers.' },
        { table: { columns: ['Command', 'What it does'], rows } },
      ],
    });
  },
});
