// Splits "/gpu hosts add gpu1 ml@10.0.0.5:22 --key ./k" into a command name and raw options.
// Only the first line carries arguments; everything after the name is also kept verbatim as `text`
// so `/gpu diagnose <paste>` keeps the paste intact. Nothing here ever reaches a shell.
import type { RawInvocation } from './command.js';

export const MAX_ARGS = 32;

export interface ParsedLine {
  name: string;
  raw: RawInvocation;
}

/**
 * A command as an adapter hands it to the registry: already split, never written back into a line to be
 * tokenised again. A typed line becomes one here (invocationOf); Discord's typed options become one as
 * they come (numbers stay numbers); a paste is `diagnose` with its text and files as they were read.
 */
export interface CommandInvocation {
  /** The command's name, lower case; '' for a bare `/gpu`. */
  command: string;
  /** Positional words (`_`) and flags by name (`--key value`, a bare `--flag` is true). */
  options: { _?: string[]; [flag: string]: unknown };
  /** The free text after the name, verbatim (a pasted log keeps its newlines). */
  text: string;
  /** Attached files' bytes (a log given with the command), decoded once, by the command that reads them. */
  files?: Buffer[];
}

/** A typed line (`/gpu status a b`) as an invocation; null when it names no command. */
export function invocationOf(line: string): CommandInvocation | null {
  const parsed = parseCommandLine(line);
  if (!parsed) return null;
  const { text, ...options } = parsed.raw;
  return { command: parsed.name, options, text };
}

function tokenize(line: string): string[] {
  const tokens: string[] = [];
  let current = '';
  let quote: string | null = null;
  let inToken = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = null;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inToken = true;
    } else if (/\s/.test(ch)) {
      if (inToken) tokens.push(current);
      current = '';
      inToken = false;
    } else {
      current += ch;
      inToken = true;
    }
    if (tokens.length > MAX_ARGS) break;
  }
  if (inToken) tokens.push(current);
  return tokens;
}

/** Accepts "/gpu status a b", "gpu status", "status a b" (the /gpu prefix is optional). */
export function parseCommandLine(input: string): ParsedLine | null {
  const trimmed = input.replace(/^\s+/, '');
  const prefix = /^\/?gpu(?:\s+|$)/i.exec(trimmed);
  const body = prefix ? trimmed.slice(prefix[0].length) : trimmed;
  const nameMatch = /^([A-Za-z][\w-]{0,63})/.exec(body);
  if (!nameMatch) return prefix ? { name: '', raw: { _: [], text: '' } } : null;
  const name = nameMatch[1].toLowerCase();
  // The blanks after the name are skipped by index, so a pasted log is sliced, never copied.
  let start = nameMatch[0].length;
  while (body[start] === ' ' || body[start] === '\t') start++;
  const text = body.slice(start);
  const firstLine = text.split('\n', 1)[0];
  const raw: RawInvocation = { _: [], text };
  const tokens = tokenize(firstLine);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const flag = /^--([a-z][a-z0-9-]{0,30})(?:=(.*))?$/i.exec(t);
    if (flag) {
      const key = flag[1].toLowerCase();
      if (flag[2] !== undefined) raw[key] = flag[2];
      else if (i + 1 < tokens.length && !tokens[i + 1].startsWith('--')) raw[key] = tokens[++i];
      else raw[key] = true;
    } else {
      raw._.push(t);
    }
  }
  return { name, raw };
}
