// `gpu-doctor bot` (npm start): Slack and/or Discord when their tokens are set, else the console chat.
import { localeFromEnv, resolveLocale } from '../core/i18n.js';
import { userInfo } from 'node:os';
import { createApp } from '../app.js';
import { runConsoleChat } from '../adapters/console/console-chat.js';
import { renderText } from '../adapters/console/render.js';
import { startChatAdapters } from '../adapters/start.js';
import { createLogger, scrubSecrets } from '../ops/logger.js';
import { parseArgs, UsageError } from './usage.js';
import { chatModeOf, howToSetAChatToken } from '../adapters/index.js';
import { fstatSync } from 'node:fs';
import type { Reply } from '../core/reply.js';
import type { PostTarget } from '../core/services.js';

// `npm start --config FILE` hands the bot FILE alone (npm keeps `--config` as its own setting and exports it
// as npm_config_config), and `npm start --config=FILE` hands it nothing: either way the bot would run
// without the config the person named. The form that reaches the bot is `npm start -- --config FILE`.
const CONFIG_FORM = 'give the config as `npm start -- --config FILE` (or `gpu-doctor bot --config FILE`)';

/** The config argument as given, refusing what the bot would otherwise ignore (stray words, npm's swallowed --config). */
function configArgument(args: string[], env: NodeJS.ProcessEnv): string | undefined {
  const { flags, positionals } = parseArgs(args, { values: ['config'] });
  if (positionals.length) throw new UsageError(`bot takes no argument "${positionals[0].slice(0, 80)}": ${CONFIG_FORM}`);
  if (flags.config === undefined && env.npm_config_config !== undefined)
    throw new UsageError(`npm took --config for itself, so the bot got no config: ${CONFIG_FORM}`);
  return flags.config;
}

/**
 * Without chat tokens the bot is the console chat, which reads a terminal or piped input. A stdin that is
 * neither (`docker run -d`, a service manager: /dev/null or closed) would end the console at once, exit 0,
 * and a restart policy would start it again forever: the missing tokens are named instead.
 */
function stdinCanChat(): boolean {
  if (process.stdin.isTTY) return true;
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket() || stat.isFile();
  } catch {
    return false; // stdin closed
  }
}

export async function botCli(args: string[]): Promise<number> {
  const config = configArgument(args, process.env);
  if (chatModeOf(process.env).mode === 'console chat' && !stdinCanChat())
    throw new Error(`no chat token set: set ${howToSetAChatToken()}; without them the bot is the console chat, which needs a terminal or piped input`);
  const app = await createApp(config);
  const logger = createLogger();
  // Last line of defence: every known path awaits or handles its promises, but one request that slips
  // through must not end the bot for everyone (Node ends the process on an unhandled rejection). It is
  // logged as an error, without secrets, and the bot goes on answering.
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: scrubSecrets(reason instanceof Error ? reason.message : String(reason)) }, 'unhandled rejection (bot kept running)');
  });
  let bots;
  try {
    bots = await startChatAdapters(app, process.env, logger);
  } catch (e) {
    await app.close();
    throw e;
  }
  if (bots) {
    logger.info({ adapters: bots.adapters, health: bots.healthPort }, 'gpu-doctor bot running');
    // SIGTERM/SIGINT: finish in-flight replies, disconnect, close SSH connections and the database.
    await new Promise<void>((resolve) => {
      const shutdown = (signal: string) => {
        logger.info({ signal }, 'shutting down');
        const force = setTimeout(() => process.exit(1), 25_000);
        force.unref();
        void bots
          .stop()
          .then(() => app.close())
          .finally(() => resolve());
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
    });
    return 0;
  }
  // Without chat tokens, scheduled digests (and the weekly feedback list) print in the console.
  const print = (target: PostTarget, reply: Reply) => {
    process.stdout.write(`\n[${target.kind === 'dm' ? `message for ${target.channel} (${target.name})` : `digest ${target.name}`}]\n${renderText(reply)}\n`);
    return Promise.resolve();
  };
  app.services.watch?.setPoster?.(print);
  app.services.schedules?.setPoster(print);
  try {
    await runConsoleChat({
      input: process.stdin,
      output: process.stdout,
      registry: app.registry,
      // The person at the terminal owns this process, so they are the admin.
      context: {
        platform: 'console',
        userId: userInfo().username,
        isAdmin: true,
        // The terminal's language: LC_ALL / LC_MESSAGES / LANG (zh_CN.UTF-8 answers in Chinese), else the config's default.
        locale: resolveLocale(app.loaded.config.locale, undefined, localeFromEnv()),
        services: app.services,
      },
      interactive: process.stdin.isTTY === true,
    });
  } finally {
    await app.close();
  }
  return 0;
}
