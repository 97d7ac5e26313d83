// /gpu diagnose <paste>: the diagnosis of a pasted training log, with the fixes computed from its numbers.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { diagnose } from '../src/diagnose/diagnose.js';
import { decodeLog } from '../src/diagnose/input.js';
import { diagnosisReply } from '../src/diagnose/reply.js';

export default defineCommand({
  name: 'diagnose',
  summary: 'Diagnose a pasted training log: CUDA OOM, host OOM kills, shared memory, NCCL, drivers...',
  usage: 'diagnose <paste a log or traceback>',
  options: z.object({ text: z.string() }),
  async run({ text }, ctx) {
    // /\S/ rather than trim(): a 16 MB paste is not copied just to see that it holds something.
    if (!/\S/.test(text)) {
      return { title: 'Nothing to diagnose', severity: 'warning', sections: [{ text: 'Paste the log after `/gpu diagnose` (or attach a .log/.txt file).' }] };
    }
    const input = decodeLog(Buffer.from(text, 'utf8'));
    return diagnosisReply(diagnose(input.text, ctx.services.rules), input);
  },
});
