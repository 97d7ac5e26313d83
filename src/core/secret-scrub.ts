// The one credential scrubber: every credential the bot holds (the chat tokens and Slack's signing
// secret from the environment, each Prometheus group's bearer token or basic-auth user:password, the
// Postgres URL's password) is replaced by a marker in any text before it is shown in a reply or written
// to a log, in the forms a server may echo it back: as it is, URL-encoded, JSON-escaped, and base64
// (what an `Authorization: Basic` header carries, and a token inside a longer base64 text at any of the
// three byte alignments). The places that read a credential register it (registerSecret); the chat
// tokens are read from the environment at each scrub, so a token set after start-up is known too.
// The bot holds no SSH passphrases: a passphrase-protected key is used only through the ssh agent.
// Lives in core/ because the command registry applies it to every reply; it imports nothing.

export const SECRET_MARKER = '[redacted]';

/** Environment variables that hold a credential themselves. */
export const SECRET_ENV = ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET', 'DISCORD_TOKEN', 'PGPASSWORD'] as const;

/** Shorter values are not searched for as they are (a 3-letter password would blank ordinary words); their base64 with the user still is. */
export const MIN_SECRET_LENGTH = 6;

const registered = new Set<string>();
const formsCache = new Map<string, string[]>();

const b64 = (b: Buffer) => b.toString('base64');
const b64url = (b: Buffer) => b.toString('base64url');

/**
 * The texts that give `secret` away, longest first: the value, its URL-encoded and JSON-escaped forms,
 * its base64 (padded, unpadded, base64url), and the part of any longer base64 text that encodes it
 * (a value that starts 0, 1 or 2 bytes into a 3-byte group: the characters that depend on it alone), the
 * value's base64 encoded once more included (a proxy that base64s the whole header it was sent).
 */
export function secretForms(secret: string): string[] {
  const cached = formsCache.get(secret);
  if (cached) return cached;
  const forms = new Set<string>();
  if (secret.length >= MIN_SECRET_LENGTH) {
    const bytes = Buffer.from(secret, 'utf8');
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
    forms.add(JSON.stringify(secret).slice(1, -1));
    forms.add(b64(bytes));
    forms.add(b64(bytes).replace(/=+$/, ''));
    forms.add(b64url(bytes));
    // Inside a longer base64 text (a whole `Authorization: Basic <base64>` header encoded again), at each alignment.
    for (const inner of [bytes, Buffer.from(b64(bytes))])
      for (const shift of [0, 1, 2]) {
        const padded = Buffer.concat([Buffer.alloc(shift), inner]);
        // Characters before `skip` mix in the bytes before the value; from the last full group on, the bytes after it.
        const skip = [0, 2, 3][shift];
        const end = Math.floor(padded.length / 3) * 4;
        for (const encoded of [b64(padded), b64url(padded)]) {
          const core = encoded.slice(skip, end);
          if (core.length >= 8) forms.add(core);
        }
      }
  }
  const out = [...forms].sort((a, b) => b.length - a.length);
  if (formsCache.size > 256) formsCache.clear();
  formsCache.set(secret, out);
  return out;
}

/** Makes `secret` known to the scrubber for the rest of the process (empty and short values add nothing alone). */
export function registerSecret(secret: string | undefined | null): void {
  if (typeof secret === 'string' && secret.length > 0) registered.add(secret);
}

/** HTTP basic auth: the password, `user:password` and so the header's base64 of it. */
export function registerBasicAuth(username: string, password: string): void {
  registerSecret(password);
  registerSecret(`${username}:${password}`);
}

/** The password of a postgres://user:password@host/db URL (decoded and as written). */
export function registerUrlPassword(url: string | undefined): void {
  if (!url) return;
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^:@/]*:([^@/]*)@/i.exec(url);
  if (!m?.[1]) return;
  registerSecret(m[1]);
  try {
    registerSecret(decodeURIComponent(m[1]));
  } catch {
    /* a malformed %-escape: the raw form is registered */
  }
}

/** For tests: forgets what was registered. */
export function forgetSecrets(): void {
  registered.clear();
}

/** Every credential known now: the registered ones and the environment's chat tokens. */
export function knownSecrets(env: NodeJS.ProcessEnv = process.env): string[] {
  const out = new Set(registered);
  for (const k of SECRET_ENV) {
    const v = env[k];
    if (typeof v === 'string' && v.length > 0) out.add(v);
  }
  return [...out];
}

/** Every form of every known credential (and `extra` ones), longest first. */
function currentForms(extra: readonly string[]): string[] {
  return [...new Set([...knownSecrets(), ...extra].flatMap(secretForms))].sort((a, b) => b.length - a.length);
}

function scrubWith(text: string, forms: readonly string[]): string {
  let out = text;
  for (const f of forms) if (out.includes(f)) out = out.split(f).join(SECRET_MARKER);
  return out.replace(/\b(xox[abeprs]|xapp)-[A-Za-z0-9-]{8,}/g, SECRET_MARKER);
}

/**
 * `text` with every form of every known credential (and `extra` ones) replaced by the marker, and
 * Slack-shaped tokens whatever their value. Linear in the text per form (split/join, no regex built from a secret).
 */
export function scrub(text: string, extra: readonly string[] = []): string {
  if (!text) return text;
  return scrubWith(text, currentForms(extra));
}

/** Every string in a JSON-like value scrubbed (a reply: title, sections' text, fields, code, tables, footer); buffers are left as they are. */
export function scrubDeep<T>(value: T): T {
  const forms = currentForms([]);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrubWith(v, forms);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object' && !Buffer.isBuffer(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}
