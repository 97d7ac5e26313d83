// `gpu-doctor bot` (npm start): Slack and/or Discord when their tokens are set, else the console chat.
import { userInfo } from 'node:os';
import { createApp } from '../app.js';
import { runConsoleChat } from '../adapters/console/console-chat.js';
import { parseArgs } from './usage.js';

export async function botCli(args: string[]): Promise<number> {
  const { flags } = parseArgs(args, { values: ['config'] });
  const app = await createApp(flags.config as string | undefined);
  try {
    await runConsoleChat({
      input: process.stdin,
      output: process.stdout,
      registry: app.registry,
      // The person at the terminal owns this process, so they are the admin.
      context: { platform: 'console', userId: userInfo().username, isAdmin: true, services: app.services },
      interactive: process.stdin.isTTY === true,
    });
  } finally {
    await app.close();
  }
  return 0;
}
