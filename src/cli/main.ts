// gpu-doctor's command line: `diagnose` for logs, `bot` to run the chat bot (console without tokens),
// and the host commands. Exit codes: 0 when the input was read, 2 on a usage error, 1 on failure.
import { diagnoseCli } from './diagnose.js';
import { UsageError } from './usage.js';
import { stripTerminalControls } from '../adapters/console/render.js';
import { didYouMean } from '../core/did-you-mean.js';

const USAGE = `usage: gpu-doctor <command> [options]
  diagnose [--json] [FILE|-]     diagnose a training log (stdin when no file or -)
  bot [--config FILE]            run the bot (Slack/Discord with tokens, else the console chat)
  status|mem [HOST...] [--json]  GPU and host memory on registered hosts
  hosts list|add|remove|test|trust ...
  digest --samples FILE [--json] leak findings from recorded samples
  knowledge check|new ...        check the rule base and its examples; scaffold a rule from a log`;

type Handler = (args: string[]) => Promise<number>;

const handlers: Record<string, () => Promise<Handler>> = {
  diagnose: async () => diagnoseCli,
  bot: async () => (await import('./bot.js')).botCli,
  status: async () => (await import('./hosts.js')).statusCli,
  mem: async () => (await import('./hosts.js')).memCli,
  hosts: async () => (await import('./hosts.js')).hostsCli,
  digest: async () => (await import('./digest.js')).digestCli,
  knowledge: async () => (await import('./knowledge.js')).knowledgeCli,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE + '\n');
    return name ? 0 : 2;
  }
  const load = handlers[name];
  if (!load) {
    const meant = didYouMean(name, Object.keys(handlers));
    throw new UsageError(`unknown command "${name.slice(0, 40)}"${meant ? `; did you mean "${meant}"?` : ''} (try: ${Object.keys(handlers).join(', ')})`);
  }
  return (await load())(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof UsageError) {
      // Messages may quote a file name or host output: printed without terminal controls.
      process.stderr.write(`gpu-doctor: ${stripTerminalControls(e.message)}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`gpu-doctor: ${stripTerminalControls((e as Error).message ?? String(e))}\n`);
      process.exitCode = 1;
    }
  },
);
