// What a chat command is: a name, a zod schema for its options, and a handler that returns a Reply.
// Commands know nothing of Slack, Discord or SSH: they get what they need through `ctx.services`.
import { z } from 'zod';
import type { Locale } from './i18n.js';
import type { ChatPlatform } from './platform.js';
import { useCatalogueForZod } from './zod-messages.js';
import type { ProgressReporter } from './progress.js';
import type { Reply } from './reply.js';
import type { Services } from './services.js';

// Options' usage errors in the asker's language: zod's messages from the catalogue (src/core/zod-messages.ts).
useCatalogueForZod();

/** Where a command runs: a chat platform, or the command line (bin/gpu-doctor). */
export type Platform = ChatPlatform | 'cli';

export interface CommandContext {
  platform: Platform;
  userId: string;
  /** Resolved by the adapter from the config's admin lists; the console's local user is admin. */
  isAdmin: boolean;
  channelId?: string;
  /** The reply's language (resolveLocale in i18n.ts: channel, user, config default); English when unset. */
  locale?: Locale;
  services: Services;
  /**
   * Shows an interim reply while a long command works ("checking 24 hosts…"); set by the registry when
   * the adapter can show one, paced there (see progress.ts). The returned reply is still the answer.
   */
  progress?: ProgressReporter;
  /** The bytes of files given with the invocation (a log attached to a message or to /gpu diagnose). */
  files?: Buffer[];
}

/** The tokens of a command line, before the command's own schema validates them. */
export interface RawInvocation {
  /** Positional words after the command name. */
  _: string[];
  /** Everything after the command name, verbatim (a pasted log keeps its newlines). */
  text: string;
  /** `--flag value`, `--flag=value` and bare `--flag` (true). */
  [flag: string]: unknown;
}

export interface Command<O = unknown> {
  name: string;
  summary: string;
  usage: string;
  options: z.ZodType<O>;
  /** Whether this invocation needs an admin (e.g. `hosts add` but not `hosts list`). */
  requiresAdmin?: (options: O) => boolean;
  run(options: O, ctx: CommandContext): Promise<Reply>;
}

/** Checked when commands load, like discord.js's guide checks `data` + `execute`. */
export const commandShape = z.object({
  name: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/),
  summary: z.string().min(1),
  usage: z.string().min(1),
  options: z.custom<z.ZodType>((v) => v instanceof z.ZodType, 'options must be a zod schema'),
  requiresAdmin: z.custom<(o: unknown) => boolean>((v) => typeof v === 'function').optional(),
  run: z.custom<(o: unknown, c: CommandContext) => Promise<Reply>>((v) => typeof v === 'function', 'run must be a function'),
});

export function defineCommand<O>(command: Command<O>): Command<O> {
  return command;
}
