// Text as both stores can keep it. PostgreSQL's text refuses U+0000 ("invalid byte sequence for encoding
// UTF8: 0x00": the whole row is lost), and a lone UTF-16 surrogate has no UTF-8 form (drivers write
// U+FFFD for it, or fail): a command line, a user id or a pasted log may hold either. NUL becomes U+2400
// (SYMBOL FOR NULL, so a reader still sees where it was), a lone surrogate U+FFFD, in SQLite as in Postgres.
import { AUDIT_COMMAND_CHARS, type AuditEntry } from '../ops/audit.js';

/** A surrogate without its other half (a high one not followed by a low one, or a low one not after a high one). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function storableText(text: string): string;
export function storableText(text: string | null): string | null;
export function storableText(text: string | null): string | null {
  if (text === null) return null;
  return text.replace(/\u0000/g, '\u2400').replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * An audit entry as both audit stores keep it: the command cut to AUDIT_COMMAND_CHARS, and NUL or a lone
 * surrogate in any text replaced (a command typed with a NUL byte would otherwise lose its row in Postgres).
 */
export function storableEntry(e: AuditEntry): AuditEntry {
  return {
    ...e,
    platform: storableText(e.platform),
    user: storableText(e.user),
    channel: storableText(e.channel),
    command: storableText(e.command.slice(0, AUDIT_COMMAND_CHARS)),
    outcome: storableText(e.outcome),
  };
}
