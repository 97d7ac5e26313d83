// `gpu-doctor feedback list [--days 7] [--json] [--config FILE]`: what `/gpu feedback` shows admins (the
// last days' 👎 and unmatched logs, votes per rule, kept log files), read from the backend openStores
// (app.ts) chooses for the bot too: data_dir/feedback.sqlite, or Postgres when the config's `storage:`
// names it (the votes of every replica).
// The person at the terminal can read the data directory, so they are the admin here.
import { localeFromEnv } from '../core/i18n.js';
import { loadConfig } from '../config.js';
import { stripTerminalControls } from '../adapters/console/render.js';
import { asksForHelp, parseArgs, UsageError } from './usage.js';
import { terminalSafeJson } from './json.js';
import type { FeedbackReport } from '../core/feedback.js';

export const FEEDBACK_USAGE = `usage: gpu-doctor feedback list [--days N] [--json] [--config FILE]
  The last N days' (7) diagnoses voted 👎 and logs no rule matched, votes per rule, and the kept logs'
  files (feedback.keep_logs) to turn into rules with \`gpu-doctor knowledge new ID --from FILE\`.
  --days    1-365 (default 7)
  --json    the report as JSON
example: gpu-doctor feedback list --days 14`;

export async function feedbackCli(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (!action || action === '--help' || action === '-h' || asksForHelp(rest)) {
    process.stdout.write(FEEDBACK_USAGE + '\n');
    return action ? 0 : 2;
  }
  if (action !== 'list') throw new UsageError(`feedback: unknown action "${action.slice(0, 20)}" (list)`);
  const { flags, positionals } = parseArgs(rest, { booleans: ['json'], values: ['days', 'config'] });
  if (positionals.length) throw new UsageError('feedback list takes no arguments besides --days, --json and --config');
  const days = flags.days === undefined ? 7 : Number(flags.days);
  if (!Number.isInteger(days) || days < 1 || days > 365) throw new UsageError('--days: a whole number of days, 1-365');
  const loaded = loadConfig(flags.config);
  const { config } = loaded;
  const print = async (report: FeedbackReport) => {
    if (flags.json) process.stdout.write(terminalSafeJson(report, 2) + '\n');
    else {
      const [{ reportReply }, { renderText }] = await Promise.all([import('../../commands/feedback.js'), import('../adapters/console/render.js')]);
      process.stdout.write(renderText(reportReply(report, localeFromEnv())) + '\n');
    }
  };
  // The one choice of backend (app.ts's openStores): Postgres holds the votes every replica took (kept log
  // files: in each replica's data_dir), else data_dir/feedback.sqlite. One connection is enough here.
  const { feedbackOptionsOf, openStores } = await import('../app.js');
  const stores = await openStores(loaded, { poolMax: 1 });
  try {
    // Opening an existing store prunes what is past feedback.retention_days, as the bot itself does.
    const found = stores.recordedFeedback(feedbackOptionsOf(config));
    if ('noneAt' in found) {
      // Nothing recorded yet: nothing is created just to say so.
      if (flags.json)
        process.stdout.write(
          terminalSafeJson({ days, sinceMs: Date.now() - days * 86_400_000, keepLogs: config.feedback.keep_logs, rules: [], items: [] }, 2) + '\n',
        );
      else process.stdout.write(`No feedback recorded yet (no ${stripTerminalControls(found.noneAt)}).\n`);
      return 0;
    }
    try {
      await print(await found.store.report(days));
    } finally {
      found.store.close();
    }
  } finally {
    await stores.close();
  }
  return 0;
}
