// Reads untrusted input (a paste, a file, stdin) into text with bounded memory: a huge log keeps only
// its tail (the last error is what matters), binary data and invalid UTF-8 are named, not crashed on.
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { message, type Message } from '../core/message.js';

export const MAX_LOG_BYTES = 16 * 1024 * 1024;

export interface LogInput {
  text: string;
  bytesTotal: number;
  bytesRead: number;
  /** What reading the log did to it (cut, binary, not UTF-8), rendered where it is shown. */
  notes: Message[];
  binary: boolean;
}

const MB = (n: number) => `${(n / 1024 / 1024).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MB`;

export function decodeLog(buf: Buffer, bytesTotal = buf.length, maxBytes = MAX_LOG_BYTES): LogInput {
  const notes: Message[] = [];
  let bytes = buf;
  if (bytes.length > maxBytes) bytes = bytes.subarray(bytes.length - maxBytes);
  // Start the tail at a line boundary so the first line is not half a line.
  if (bytesTotal > bytes.length) {
    const nl = bytes.indexOf(10);
    if (nl !== -1 && nl < 64 * 1024) bytes = bytes.subarray(nl + 1);
    notes.push(message('note.log.cut', { total: MB(bytesTotal), read: MB(bytes.length) }));
  }
  // Binary data: NUL bytes or many control bytes in the first 64 KB.
  const sample = bytes.subarray(0, 65536);
  let control = 0;
  let nul = 0;
  for (const b of sample) {
    if (b === 0) nul++;
    else if (b < 9 || (b > 13 && b < 27) || (b > 27 && b < 32)) control++;
  }
  const binary = sample.length > 0 && (nul > 0 || control / sample.length > 0.1);
  if (binary) notes.push(message('note.log.binary'));
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (text.includes('\uFFFD') && !binary) notes.push(message('note.log.utf8'));
  return { text: binary ? text.replace(/\0/g, '') : text, bytesTotal, bytesRead: bytes.length, notes, binary };
}

/**
 * A log that arrived as text (a paste, a chat message) checked as decodeLog checks bytes, without turning
 * it into bytes and back: only a text over maxBytes of UTF-8 is encoded, to keep its tail at a line.
 */
export function decodeText(text: string, maxBytes = MAX_LOG_BYTES): LogInput {
  // No text is over maxBytes of UTF-8 unless it is over maxBytes / 3 characters (a UTF-16 unit is at most 3 bytes).
  const bytes = text.length * 3 > maxBytes ? Buffer.byteLength(text, 'utf8') : -1;
  if (bytes > maxBytes) return decodeLog(Buffer.from(text, 'utf8'), bytes, maxBytes);
  const notes: Message[] = [];
  // Binary data as decodeLog sees it: NUL or many control characters in the first 64 K.
  const sample = text.slice(0, 65536);
  let control = 0;
  let nul = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    if (c === 0) nul++;
    else if (c < 9 || (c > 13 && c < 27) || (c > 27 && c < 32)) control++;
  }
  const binary = sample.length > 0 && (nul > 0 || control / sample.length > 0.1);
  if (binary) notes.push(message('note.log.binary'));
  if (text.includes('\uFFFD') && !binary) notes.push(message('note.log.utf8'));
  const size = bytes >= 0 ? bytes : Buffer.byteLength(text, 'utf8');
  return { text: binary ? text.replace(/\0/g, '') : text, bytesTotal: size, bytesRead: size, notes, binary };
}

/** Reads a stream keeping at most the last maxBytes (plus one chunk) in memory. */
export async function readLogStream(stream: Readable, maxBytes = MAX_LOG_BYTES): Promise<LogInput> {
  const chunks: Buffer[] = [];
  let held = 0;
  let total = 0;
  for await (const chunk of stream) {
    const b: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    chunks.push(b);
    held += b.length;
    total += b.length;
    while (held - chunks[0].length >= maxBytes) held -= chunks.shift()!.length;
  }
  return decodeLog(Buffer.concat(chunks), total, maxBytes);
}

export function readLogFile(path: string, maxBytes = MAX_LOG_BYTES): Promise<LogInput> {
  return readLogStream(createReadStream(path), maxBytes);
}
