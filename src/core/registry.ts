// Holds the commands (checked at load) and runs one invocation: validate options with the
// command's zod schema, enforce admin-only actions, turn any failure into a clear reply.
import { commandShape, type Command, type CommandContext, type RawInvocation } from './command.js';
import { didYouMean } from './did-you-mean.js';
import { t, type MessageKey } from './i18n.js';
import { errorText, render } from './message.js';
import { invocationOf, type CommandInvocation } from './invocation.js';
import type { ProgressPacer } from './progress.js';
import type { Reply } from './reply.js';
import { scrubDeep } from './secret-scrub.js';
import { argumentProblem } from './zod-messages.js';

export class CommandLoadError extends Error {}

export interface DispatchOutcome {
  command: string;
  outcome: 'ok' | 'usage' | 'denied' | 'unknown' | 'error';
  reply: Reply;
  ms: number;
  /** The rule a diagnosis names (its id, from the rule base), as the command returned it: never read back from the reply's text. */
  rule?: string;
}

export interface DispatchOptions {
  /** Where the command's interim replies go, paced; without it the command runs without progress. */
  progress?: ProgressPacer;
  /**
   * Awaited once the invocation passed every check, right before the command runs: an adapter acks
   * there, so a refusal found by the checks can be the ack itself and no work of the command (a fork,
   * a store read) delays it.
   */
  beforeRun?: () => Promise<void>;
}

/** A command of any option type: each validates its own options with its schema before run. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Command<O> is invariant in O (options in and out)
export type AnyCommand = Command<any>;

export class CommandRegistry {
  readonly commands = new Map<string, AnyCommand>();

  constructor(commands: AnyCommand[]) {
    for (const c of commands) {
      const checked = commandShape.safeParse(c);
      if (!checked.success) {
        const where = (c as { name?: string })?.name ?? '(unnamed)';
        throw new CommandLoadError(`command ${where}: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      }
      if (this.commands.has(c.name)) throw new CommandLoadError(`command ${c.name}: defined twice`);
      this.commands.set(c.name, c);
    }
  }

  list(): AnyCommand[] {
    return [...this.commands.values()];
  }

  /**
   * Runs a command: a typed line "/gpu NAME ..." (the prefix is optional), tokenised here once, or an
   * invocation an adapter built (Discord's typed options, a paste and its files). Never throws. With `progressOptions.progress`, the
   * command's interim replies go there; when this resolves that pacer is finished (no interim edit in
   * flight or still to come), so the adapter can put the final reply in place of the last one.
   */
  async dispatch(line: string | CommandInvocation, ctx: CommandContext, progressOptions: DispatchOptions = {}): Promise<DispatchOutcome> {
    const pacer = progressOptions.progress;
    try {
      // No credential reaches a chat: a source's error text may echo one (a proxy quoting the Authorization
      // header). Interim replies are made from host results, which the hosts service scrubs as they come.
      const out = await this.run(line, pacer ? { ...ctx, progress: pacer.update } : ctx, progressOptions.beforeRun);
      return { ...out, reply: scrubDeep(out.reply) };
    } finally {
      // On every path, refusals included: an interim reply shown before (reading a file) is not left pending.
      await pacer?.finish();
    }
  }

  private async run(line: string | CommandInvocation, ctx: CommandContext, beforeRun?: () => Promise<void>): Promise<DispatchOutcome> {
    const started = performance.now();
    const done = (command: string, outcome: DispatchOutcome['outcome'], reply: Reply): DispatchOutcome => ({
      command,
      outcome,
      reply: ctx.locale && !reply.locale ? { ...reply, locale: ctx.locale } : reply,
      ms: performance.now() - started,
      ...(reply.rule !== undefined ? { rule: reply.rule } : {}),
    });
    const invocation = typeof line === 'string' ? invocationOf(line) : line;
    const names = [...this.commands.keys()].join(', ');
    const loc = ctx.locale;
    if (!invocation || invocation.command === '') {
      return done('', 'usage', { title: t(loc, 'registry.which.title'), severity: 'warning', sections: [{ text: t(loc, 'registry.which.text', { names }) }] });
    }
    const name = invocation.command;
    const command = this.commands.get(name);
    if (!command) {
      const shown = name.length > 40 ? name.slice(0, 40) + '…' : name;
      const meant = didYouMean(name, this.commands.keys());
      const hint = meant ? t(loc, 'registry.unknown.didYouMean', { name: meant }) : '';
      return done(name, 'unknown', {
        title: t(loc, 'registry.unknown.title', { name: shown }),
        severity: 'warning',
        sections: [{ text: t(loc, 'registry.unknown.text', { hint, names }) }],
      });
    }
    const raw: RawInvocation = { ...invocation.options, _: invocation.options._ ?? [], text: invocation.text };
    // `/gpu CMD --help` (or -h) answers with the command's usage and summary, whatever else was typed; a
    // command taking free text only when --help is all of it (a pasted log may hold the word).
    const known = optionKeys(command.options);
    const freeText = !known || known.includes('text');
    const typed = raw.text.trim();
    if (freeText ? typed === '--help' || typed === '-h' : raw.help !== undefined || raw._[0] === '-h') {
      return done(command.name, 'ok', {
        title: t(loc, 'registry.usage.title', { usage: command.usage }),
        severity: 'info',
        visibility: 'asker',
        sections: [{ text: t(loc, `cmd.${command.name}.summary` as MessageKey) }],
      });
    }
    // An unknown --option is a typo, not something to ignore; commands that take free text (a pasted log
    // whose first line carries the training command's own flags) are left alone.
    if (!freeText) {
      for (const key of Object.keys(raw)) {
        if (key === '_' || key === 'text' || known.includes(key)) continue;
        const meant = didYouMean(
          key,
          known.filter((k) => k !== '_'),
        );
        return done(command.name, 'usage', {
          title: t(loc, 'registry.usage.title', { usage: command.usage }),
          severity: 'warning',
          sections: [
            {
              text: t(loc, 'registry.usage.unknownOption', {
                key: key.slice(0, 40),
                hint: meant ? t(loc, 'registry.usage.didYouMeanOption', { name: meant }) : '',
              }),
            },
          ],
        });
      }
    }
    const options = command.options.safeParse(raw);
    if (!options.success) {
      // Each problem a sentence naming the argument as the usage line does (GPU, --theme), not zod's path.
      const problems = options.error.issues.map((i) => argumentProblem(i, command.usage, raw, loc));
      return done(command.name, 'usage', {
        title: t(loc, 'registry.usage.title', { usage: command.usage }),
        severity: 'warning',
        sections: [{ text: problems.join('\n') }],
      });
    }
    if (command.requiresAdmin?.(options.data) && !ctx.isAdmin) {
      return done(command.name, 'denied', {
        title: t(loc, 'registry.denied.title'),
        severity: 'warning',
        sections: [{ text: command.name === 'hosts' ? t(loc, 'registry.denied.hosts') : t(loc, 'registry.denied.other', { name: command.name }) }],
      });
    }
    // Owner names as any replica approved them (Postgres storage); a failed read keeps the last ones.
    await ctx.services.owners?.refresh?.().catch(() => undefined);
    await beforeRun?.();
    try {
      return done(command.name, 'ok', await command.run(options.data, invocation.files?.length ? { ...ctx, files: invocation.files } : ctx));
    } catch (e) {
      return done(command.name, 'error', {
        title: t(loc, 'registry.failed.title', { name: command.name }),
        severity: 'error',
        // A service's refusal (a MessageError) in the asker's language; any other error's first line as it is.
        sections: [{ text: render(loc, errorText(e)) }],
      });
    }
  }
}

/** The keys an options schema declares (zod object, possibly wrapped), or undefined when it is not an object. */
function optionKeys(schema: unknown): string[] | undefined {
  let cur = schema as { shape?: Record<string, unknown>; unwrap?: () => unknown; removeDefault?: () => unknown } | undefined;
  for (let i = 0; i < 5 && cur; i++) {
    if (cur.shape && typeof cur.shape === 'object') return Object.keys(cur.shape);
    if (typeof cur.removeDefault === 'function') cur = cur.removeDefault() as typeof cur;
    else if (typeof cur.unwrap === 'function') cur = cur.unwrap() as typeof cur;
    else return undefined;
  }
  return undefined;
}
