// The console chat: `/gpu ...` commands and pasted logs in a terminal or from a pipe.
//
// How a multi-line paste ends: a line with a single "." ends it, and so does the next line starting
// with "/gpu", or the end of input (Ctrl-D / EOF). In a terminal a paste also ends when no more lines
// arrive for 300 ms (a paste arrives in one burst), so pasting a traceback and waiting is enough.
//
// In a terminal, readline runs in terminal mode: the line being typed can be edited (arrows, Ctrl-A/E,
// Ctrl-W...) and earlier lines come back with up/down. A long command's progress is one live line,
// rewritten in place, that the answer replaces; through a pipe each progress update is a plain line.
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { CommandRegistry } from '../../core/registry.js';
import type { CommandContext } from '../../core/command.js';
import type { Reply } from '../../core/reply.js';
import { ProgressPacer, type ProgressPacerOptions, type ProgressSink } from '../../core/progress.js';
import { renderText, stripTerminalControls } from './render.js';
import { diagnoseInvocation, pasteOf, typedCommand } from '../../core/inbound.js';
import { t } from '../../core/i18n.js';

export interface ConsoleChatOptions {
  input: Readable;
  output: Writable;
  registry: CommandRegistry;
  context: CommandContext;
  interactive: boolean;
  idleMs?: number;
  /** Where attached files (charts) are written; default $GPU_DOCTOR_FILES_DIR, else <tmpdir>/gpu-doctor. */
  filesDir?: string;
  /** Lines kept for up/down in a terminal. */
  historySize?: number;
  /** Pacing of interim replies (quiet period, interval); the defaults of core/progress.ts unless set. */
  progressPacing?: Pick<ProgressPacerOptions, 'quietMs' | 'intervalMs'>;
}

/**
 * A terminal cannot show a picture: each attached file is written to `dir` and its path printed. Names
 * keep only [A-Za-z0-9._-] (they carry host names) and get the time, so a later chart never overwrites
 * an earlier one.
 */
export function saveReplyFiles(reply: Reply, dir: string, now = new Date()): string[] {
  if (!reply.files?.length) return [];
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return reply.files.map((f, i) => {
    const name =
      f.filename
        .replace(/[^A-Za-z0-9._-]/g, '_')
        .replace(/^\.+/, '')
        .slice(0, 120) || `file-${i}`;
    const path = join(dir, `${stamp}-${i}-${name}`);
    writeFileSync(path, f.data, { mode: 0o600 });
    return path;
  });
}

const MAX_PASTE_BYTES = 16 * 1024 * 1024;
/** Erases the terminal line the cursor is on and returns to its start. */
const CLEAR_LINE = '\r\u001b[2K';

/** A progress reply as one line: its title and first text, without control characters, cut to `width`. */
export function progressLine(reply: Reply, width: number): string {
  const first = reply.sections.find((s) => s.text)?.text ?? '';
  const line = stripTerminalControls(`… ${reply.title}${first ? ` ${first}` : ''}`.replace(/\s+/g, ' ')).trim();
  return line.length > width ? line.slice(0, Math.max(1, width - 1)) + '…' : line;
}

export async function runConsoleChat(o: ConsoleChatOptions): Promise<void> {
  const rl = o.interactive
    ? createInterface({ input: o.input, output: o.output, crlfDelay: Infinity, terminal: true, historySize: o.historySize ?? 500, prompt: '> ' })
    : createInterface({ input: o.input, crlfDelay: Infinity, terminal: false });
  // Ctrl-C in a terminal ends the chat as it did before readline owned the terminal.
  if (o.interactive) rl.on('SIGINT', () => rl.close());
  // Up/down walks through commands typed, not through the lines of pasted logs.
  if (o.interactive) rl.on('history', (lines: string[]) => lines.splice(0, lines.length, ...lines.filter((l) => /^\s*\/(?:gpu|feedback)\b/i.test(l))));
  let liveLine = false;
  const write = (s: string) => {
    if (liveLine) o.output.write(CLEAR_LINE);
    liveLine = false;
    o.output.write(s + '\n');
  };
  const columns = () => (o.output as Writable & { columns?: number }).columns ?? 100;
  // Interim replies: rewritten in place in a terminal, one plain line each through a pipe.
  const showProgress: ProgressSink = (reply) => {
    if (o.interactive) {
      o.output.write(CLEAR_LINE + progressLine(reply, columns() - 1));
      liveLine = true;
    } else {
      o.output.write(progressLine(reply, 200) + '\n');
    }
    return Promise.resolve();
  };
  const filesDir = o.filesDir ?? process.env.GPU_DOCTOR_FILES_DIR ?? join(tmpdir(), 'gpu-doctor');
  const answer = (reply: Reply) => {
    write(renderText(reply));
    try {
      for (const path of saveReplyFiles(reply, filesDir)) write(stripTerminalControls(`(saved: ${path})`));
    } catch (e) {
      write(stripTerminalControls(`(could not save the attached files in ${filesDir}: ${(e as Error).message})`));
    }
  };
  let buffer: string[] = [];
  let bufferBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  let queue = Promise.resolve();

  const handle = async (typed: string) => {
    // `/feedback up|down [ID]` is `/gpu feedback ...`: 👍 / 👎 on your last diagnosis, or the one named.
    const block = /^\s*\/feedback\b/i.test(typed) ? `/gpu ${typed.trimStart().slice(1)}` : typed;
    const trimmed = block.trim();
    if (trimmed === '') return;
    // A command as typed (the registry tokenises it), else a paste (core/inbound.ts), else a hint.
    if (typedCommand(trimmed)) {
      const { reply } = await o.registry.dispatch(block, o.context, { progress: new ProgressPacer(showProgress, o.progressPacing) });
      answer(reply);
    } else if (pasteOf(block, [])) {
      const { reply } = await o.registry.dispatch(diagnoseInvocation(block, []), o.context, { progress: new ProgressPacer(showProgress, o.progressPacing) });
      answer(reply);
    } else {
      write(t(o.context.locale, 'console.notACommand'));
    }
    if (o.interactive) rl.prompt();
  };
  const flush = () => {
    clearTimeout(timer);
    const block = buffer.join('\n');
    buffer = [];
    bufferBytes = 0;
    queue = queue.then(() => handle(block));
  };

  if (o.interactive) {
    write('gpu-doctor console. Type /gpu help, or paste a log (end it with a "." line or just wait).');
    rl.prompt();
  }
  for await (const line of rl) {
    if (line === '.') {
      flush();
      continue;
    }
    if (/^\s*\/(?:gpu|feedback)\b/i.test(line) && buffer.length) flush();
    if (bufferBytes + line.length < MAX_PASTE_BYTES) {
      buffer.push(line);
      bufferBytes += line.length + 1;
    }
    // A single-line command runs at once; anything else waits for the end of the paste.
    if (/^\s*(?:\/gpu\s+(?!diagnose\b)\S|\/feedback\b)/i.test(line) && buffer.length === 1) flush();
    else if (o.interactive) {
      clearTimeout(timer);
      timer = setTimeout(flush, o.idleMs ?? 300);
    }
  }
  flush();
  await queue;
}
