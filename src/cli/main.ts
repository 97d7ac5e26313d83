// gpu-doctor's command line: `diagnose` for logs, `bot` to run the chat bot (console without tokens),
// and the host commands. Exit codes: 0 when the input was read, 2 on a usage error, 1 on failure.
import { diagnoseCli } from './diagnose.js';
import { asksForHelp, UsageError } from './usage.js';
import { stripTerminalControls } from '../adapters/console/render.js';
import { didYouMean } from '../core/did-you-mean.js';
import { PROJECT_ROOT } from '../core/paths.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const USAGE = `usage: gpu-doctor <command> [options]
  diagnose [--json] [FILE|-]     diagnose a training log (stdin when no file or -)
  bot [--config FILE]            run the bot (Slack/Discord with tokens, else the console chat)
  status|mem [HOST...] [--json]  GPU and host memory on registered hosts
  hosts list|add|remove|test|trust ...
  digest --samples FILE [--json] leak findings from recorded samples
  knowledge check|new ...        check the rule base and its examples; scaffold a rule from a log
  feedback list [--days N] [--json]  the week's 👎 and unmatched logs, votes per rule, kept logs`;

// Each subcommand's own help: usage, options, an example (`gpu-doctor CMD --help`).
const HELP: Record<string, string> = {
  diagnose: `usage: gpu-doctor diagnose [--json] [FILE|-]
  Diagnose a training log: CUDA/host OOM, fragmentation, DataLoader and /dev/shm, NCCL, drivers.
  FILE      a log file (up to 16 MB read; larger keeps its last 16 MB); - or none: stdin
  --json    the diagnoses, facts, fixes and readings as JSON (the contract in the README)
example: gpu-doctor diagnose train.log`,
  bot: `usage: gpu-doctor bot [--config FILE]
  Run the chat bot: Slack and/or Discord when their tokens are set, else the console chat.
  --config  the YAML config (default: $GPU_DOCTOR_CONFIG; none: defaults and environment only)
example: gpu-doctor bot --config gpu-doctor.yaml   (with SLACK_BOT_TOKEN and SLACK_APP_TOKEN set: Slack)`,
  status: `usage: gpu-doctor status [HOST...] [--json] [--config FILE]
  Who holds which GPU on the registered hosts: memory, utilisation, temperature, processes.
example: gpu-doctor status gpu1 gpu2`,
  mem: `usage: gpu-doctor mem [HOST...] [--json] [--config FILE]
  Host RAM on the registered hosts; warns under 10% available.
example: gpu-doctor mem gpu1`,
  hosts: `usage: gpu-doctor hosts list|add|remove|test|trust ... [--config FILE]
  list                          the registered hosts
  add NAME USER@HOST[:PORT] --trust SHA256:...   register a host, pinning the key read on it
  remove NAME | test NAME | trust NAME SHA256:...
example: gpu-doctor hosts add gpu3 ml@10.0.0.3 --trust SHA256:AbC...`,
  digest: `usage: gpu-doctor digest --samples FILE [--json]
  Leak findings (creep, rank-0 growth, host RAM, idle held memory) from recorded JSON-lines samples.
example: gpu-doctor digest --samples samples.jsonl --json`,
};

function version(): string {
  try {
    return (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

type Handler = (args: string[]) => Promise<number>;

const handlers: Record<string, () => Promise<Handler>> = {
  diagnose: () => Promise.resolve(diagnoseCli),
  bot: async () => (await import('./bot.js')).botCli,
  status: async () => (await import('./hosts.js')).statusCli,
  mem: async () => (await import('./hosts.js')).memCli,
  hosts: async () => (await import('./hosts.js')).hostsCli,
  digest: async () => (await import('./digest.js')).digestCli,
  knowledge: async () => (await import('./knowledge.js')).knowledgeCli,
  feedback: async () => (await import('./feedback.js')).feedbackCli,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE + '\n');
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`gpu-doctor ${version()}\n`);
    return 0;
  }
  if (HELP[name] && asksForHelp(rest)) {
    process.stdout.write(HELP[name] + '\n');
    return 0;
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
    // A failed start can leave a library's timers behind (discord.js keeps retrying a login that never got
    // READY): the error is the end, so the process ends too, whatever is still scheduled.
    setTimeout(() => process.exit(), 1000).unref();
  },
);
