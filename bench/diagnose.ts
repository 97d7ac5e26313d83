// npm run bench: the full rule base over 1 MB and 20 MB realistic logs, beside GNU grep -E -c -f with
// the rule base's own patterns on the same files. Process start is excluded on both sides: grep's is
// measured on an empty file and subtracted; ours runs in-process.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRuleBase } from '../src/diagnose/rule-base.js';
import { diagnose } from '../src/diagnose/diagnose.js';

const base = await loadRuleBase();
const dir = mkdtempSync(join(tmpdir(), 'gd-bench-'));
const evalDir = new URL('../../shared/eval/tracebacks/', import.meta.url).pathname;

// A realistic training log: progress lines and warnings, with real error logs spread through it.
const realLogs = readdirSync(evalDir)
  .filter((f) => f.endsWith('.log'))
  .map((f) => readFileSync(join(evalDir, f), 'utf8'));
function makeLog(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line =
      i % 500 === 499
        ? realLogs[((i / 500) % realLogs.length) | 0]
        : `      ${1 + (i % 300)}/300      ${(10 + (i % 7) / 10).toFixed(2)}G      1.${i % 997}      0.${i % 89}      1.${i % 13}        ${100 + (i % 50)}        640:  ${i % 100}%|███▌      | ${i % 430}/430 [00:41<04:59,  1.26it/s]`;
    parts.push(line);
    size += line.length + 1;
  }
  return parts.join('\n');
}

// GNU grep has no re2 syntax for (?:...) — translate to plain groups, which ERE accepts. Perl classes become POSIX
// ones: outside brackets as a bracket of their own ([[:space:]]), inside a bracket as its member ([:space:]), so a
// class such as [\s,(] stays one bracket expression.
const PERL_CLASS: Record<string, [inside: string, outside: string]> = {
  d: ['0-9', '[0-9]'],
  s: ['[:space:]', '[[:space:]]'],
  S: ['', '[^[:space:]]'],
  w: ['[:alnum:]_', '[[:alnum:]_]'],
  W: ['', '[^[:alnum:]_]'],
};
function toEre(source: string): string {
  let out = '';
  let inBracket = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\' && i + 1 < source.length) {
      const n = source[i + 1];
      const perl = PERL_CLASS[n];
      // a negated class inside a bracket has no POSIX member: keep the escape (a little looser, the same work)
      if (perl) out += inBracket ? perl[0] || `\\${n}` : perl[1];
      else out += c + n;
      i++;
      continue;
    }
    if (!inBracket && c === '(' && source.startsWith('(?:', i)) {
      out += '(';
      i += 2;
      continue;
    }
    if (!inBracket && c === '[') {
      inBracket = true;
      out += c;
      // a ] right after [ or [^ is a member, not the end
      if (source[i + 1] === '^') out += source[++i];
      if (source[i + 1] === ']') out += source[++i];
      continue;
    }
    if (inBracket && c === ']') inBracket = false;
    out += c;
  }
  return out;
}
const patternsFile = join(dir, 'patterns.txt');
writeFileSync(
  patternsFile,
  base.patterns
    .map((p) =>
      toEre(p.source)
        // re2's \x{HHHH} is the character itself; grep's UTF-8 locale (C.UTF-8) refuses ranges of CJK characters, and
        // glibc counts those characters as [:alpha:], so a range of them becomes that class (a little looser, the same work).
        .replace(/\\x\{[0-9a-fA-F]{1,6}\}-\\x\{[0-9a-fA-F]{1,6}\}/g, '[:alpha:]')
        .replace(/\\x\{([0-9a-fA-F]{1,6})\}/g, (_m, hex: string) => String.fromCodePoint(parseInt(hex, 16))),
    )
    .join('\n') + '\n',
);
const empty = join(dir, 'empty.log');
writeFileSync(empty, '');

const time = (f: () => void, runs = 5) => {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    f();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
};
const grep = (file: string) => () => {
  try {
    execFileSync('grep', ['-E', '-i', '-c', '-f', patternsFile, file], { stdio: 'pipe', env: { ...process.env, LC_ALL: 'C.UTF-8' } });
  } catch (e) {
    if ((e as { status?: number }).status !== 1) throw e;
  }
};

const grepStart = time(grep(empty), 9);
console.log(`rules: ${base.rules.length}, patterns: ${base.patterns.length}; grep process start ${grepStart.toFixed(1)} ms (subtracted)`);
console.log('size    diagnose ms   grep ms   ratio (diagnose / grep)');
for (const mb of [1, 20]) {
  const text = makeLog(mb * 1024 * 1024);
  const file = join(dir, `${mb}mb.log`);
  writeFileSync(file, text);
  const ours = time(() => diagnose(text, base));
  const theirs = Math.max(0.1, time(grep(file)) - grepStart);
  console.log(`${String(mb).padStart(2)} MB   ${ours.toFixed(1).padStart(10)}   ${theirs.toFixed(1).padStart(7)}   ${(ours / theirs).toFixed(2)}x`);
}
