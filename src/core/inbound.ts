// The paste policy, written once for every chat (Slack, Discord, the console): which message is a command,
// which is a pasted log worth a diagnosis, which attached files are read, when what was read is still
// chatter, and how the notes on reading files lead the answer. Adapters only say what their platform
// sent (text, files with their names and types) and hand the result to the registry as an invocation.
import { looksLikeLog } from './paste.js';
import type { CommandInvocation } from './invocation.js';
import type { Reply } from './reply.js';

/** File names read as logs whatever type the platform gives them. */
export const TEXT_FILE = /\.(log|txt|out|err)$/i;

/**
 * The file Discord makes of a message too long to send: the words of a chat message as often as a log,
 * so it is answered only when it reads like one.
 */
export const LONG_MESSAGE_FILE = 'message.txt';

/** A file offered with a message, as the platform describes it (before anything is downloaded). */
export interface OfferedFile {
  name: string;
  /** The MIME type the platform gives (`text/plain; charset=utf-8`), if any. */
  mimeType?: string;
  /** The platform's own word that the file is text (Slack's filetype `text`). */
  platformText?: boolean;
}

/** `/gpu …` (or `gpu …`) at the start of a message: a command typed as text, not a paste. */
export function typedCommand(text: string): boolean {
  return /^\s*\/?gpu\b/i.test(text);
}

/** A file the bot reads: a log's name, or text by the platform's word. */
export function readableFile(f: OfferedFile): boolean {
  return TEXT_FILE.test(f.name) || f.platformText === true || (f.mimeType ?? '').startsWith('text/plain');
}

export interface PasteDecision<F extends OfferedFile> {
  /** The message's text is itself a log to diagnose. */
  pasted: boolean;
  /** The files to read (in the order sent); the adapter reads at most MAX_FILES_PER_MESSAGE of them. */
  files: F[];
}

/**
 * What of a message in a channel is worth a diagnosis, or null for chatter (no reply at all). Its text
 * is a paste when it reads like a log (a command typed with a log after it included: the log is what
 * the asker wants read); a command typed as text that is no log is never one. Its files are read when
 * they are text (readableFile), whatever the text says.
 */
export function pasteOf<F extends OfferedFile>(text: string, files: readonly F[]): PasteDecision<F> | null {
  const pasted = /\S/.test(text) && looksLikeLog(text);
  const readable = files.filter(readableFile);
  if (!pasted && readable.length === 0) return null;
  return { pasted, files: readable };
}

/** The most of a file's bytes read to judge whether it reads like a log: its first and last 128 KB, as paste.ts reads text. */
const JUDGED_BYTES = 128 * 1024;

/** A file's text as far as looksLikeLog reads it, decoded from at most 256 KB of it. */
function judgedText(data: Buffer): string {
  if (data.length <= 2 * JUDGED_BYTES) return data.toString('utf8');
  return data.toString('utf8', 0, JUDGED_BYTES) + data.toString('utf8', data.length - JUDGED_BYTES);
}

/**
 * After reading: whether the message is answered. A paste or a file named as a log always is; files
 * that are text only by type or are Discord's message.txt are answered only when what was read reads
 * like a log (a long chat message sent as a file gets no reply, as it would not have as text).
 */
export function worthAnswering(decision: PasteDecision<OfferedFile>, read: readonly Buffer[]): boolean {
  if (decision.pasted) return true;
  if (decision.files.some((f) => TEXT_FILE.test(f.name) && f.name !== LONG_MESSAGE_FILE)) return true;
  return read.some((data) => looksLikeLog(judgedText(data)));
}

/** The diagnosis of what a message holds: its pasted text (when it is one) and the bytes of its files. */
export function diagnoseInvocation(text: string | null, files: Buffer[]): CommandInvocation {
  return { command: 'diagnose', options: {}, text: text ?? '', files };
}

/** The notes on reading a message's files (read, cut, refused, skipped) lead the answer. */
export function withFileNotes(reply: Reply, notes: readonly string[]): Reply {
  return notes.length ? { ...reply, sections: [{ text: notes.join('\n') }, ...reply.sections] } : reply;
}
