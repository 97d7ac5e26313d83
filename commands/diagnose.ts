// /gpu diagnose <paste>: the diagnosis of a pasted training log, with the fixes computed from its numbers.
// When the paste names a registered host (`host:gpu3`, a prompt `alice@gpu3:~$`, the name in the log),
// the reply adds what that host's GPU holds right now (read-only, time-boxed).
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t, type Locale } from '../src/core/i18n.js';
import { recordDiagnosis } from '../src/core/feedback.js';
import type { ProgressReporter } from '../src/core/progress.js';
import type { Reply } from '../src/core/reply.js';
import type { HostStatusResult, HostsService } from '../src/core/services.js';
import { diagnose, type DiagnoseResult } from '../src/diagnose/diagnose.js';
import { decodeLog, decodeText, type LogInput } from '../src/diagnose/input.js';
import { hostsNamedIn, liveSection } from '../src/diagnose/live-check.js';
import { diagnosisReply } from '../src/diagnose/reply.js';

/** The live reading is extra: the diagnosis is never held up longer than this for it. */
const LIVE_TIMEOUT_MS = 15_000;

export default defineCommand({
  name: 'diagnose',
  summary: t('en', 'cmd.diagnose.summary'),
  usage: 'diagnose [host:NAME] <paste a log or traceback>',
  options: z.object({ text: z.string() }),
  async run({ text }, ctx) {
    const files = ctx.files ?? [];
    // /\S/ rather than trim(): a 16 MB paste is not copied just to see that it holds something.
    if (!/\S/.test(text) && files.length === 0) {
      return { title: t(ctx.locale, 'diagnose.empty.title'), severity: 'warning', sections: [{ text: t(ctx.locale, 'diagnose.empty.text') }] };
    }
    const input = logOf(text, files);
    const result = diagnose(input.text, ctx.services.rules, ctx.locale);
    const reply = diagnosisReply(result, input, ctx.locale);
    // 👍 / 👎: the diagnosis is stored (rule, category; the redacted log only when the config opts in).
    const best = result.diagnoses[0];
    const feedbackId = await recordDiagnosis(
      ctx,
      { rule: best?.rule ?? null, category: best?.category ?? (result.notMemory ? 'not_memory' : null) },
      input.text,
    );
    if (feedbackId) reply.feedback = { id: feedbackId, locale: ctx.locale };
    if (ctx.services.hosts && result.diagnoses.length) await addLiveReading(reply, result, input.text, ctx.services.hosts, ctx.progress, ctx.locale);
    return reply;
  },
});

/**
 * The log to diagnose: the pasted text as it is (never encoded and decoded again) and each attached
 * file's bytes decoded once, joined line after line, within the same 16 MB as one pasted log.
 */
function logOf(text: string, files: Buffer[]): LogInput {
  if (files.length === 0) return decodeText(text);
  const decoded = files.map((f) => decodeLog(f));
  const parts = [...(/\S/.test(text) ? [text] : []), ...decoded.map((d) => d.text)];
  const joined = decodeText(parts.join('\n'));
  // The same note once (each file and the joined text may say the log is not UTF-8).
  const notes = new Map([...decoded.flatMap((d) => d.notes), ...joined.notes].map((n) => [JSON.stringify(n), n]));
  return { ...joined, notes: [...notes.values()] };
}

async function addLiveReading(
  reply: Reply,
  result: DiagnoseResult,
  text: string,
  hosts: HostsService,
  progress?: ProgressReporter,
  locale?: Locale,
): Promise<void> {
  const named = hostsNamedIn(
    text,
    (await hosts.list()).map((h) => h.name),
  );
  if (!named.length) return;
  // The diagnosis is ready: shown while the host is read (up to LIVE_TIMEOUT_MS), completed after.
  void progress?.({ ...reply, sections: [...reply.sections, { text: t(locale, 'diagnose.reading', { hosts: named.join(', ') }) }] });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<HostStatusResult[]>((resolve) => {
    timer = setTimeout(
      () => resolve(named.map((name) => ({ name, ok: false, error: t(locale, 'diagnose.noAnswer', { s: LIVE_TIMEOUT_MS / 1000 }) }))),
      LIVE_TIMEOUT_MS,
    );
  });
  const live = await Promise.race([
    hosts.status(named).catch((e: unknown) => named.map((name): HostStatusResult => ({ name, ok: false, error: e instanceof Error ? e.message : String(e) }))),
    timeout,
  ]).finally(() => clearTimeout(timer));
  // After "Who holds the memory" (or the facts): the live reading answers the same question for now.
  const at = reply.sections.findIndex((s) => s.key === 'diag.heading.holder');
  const insertAt = at >= 0 ? at + 1 : Math.min(1, reply.sections.length);
  reply.sections.splice(insertAt, 0, ...live.map((r) => liveSection(r, result.diagnoses[0]?.incident, locale)));
}
