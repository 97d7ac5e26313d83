// Production code holds no test data (issue 13 §6): nothing under src/ or commands/ imports from
// test/ or bench/, and the seeded trace generators live in test/watch/.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : /\.(?:ts|mjs|js)$/.test(name) ? [p] : [];
  });
}

it('src/ and commands/ import nothing from test/ or bench/', () => {
  const offenders = [...files(join(root, 'src')), ...files(join(root, 'commands'))].filter((f) =>
    /from\s+['"][^'"]*\/(?:test|bench)\/|import\(\s*['"][^'"]*\/(?:test|bench)\//.test(readFileSync(f, 'utf8')),
  );
  expect(offenders.map((f) => f.slice(root.length + 1))).toEqual([]);
});

it('the trace generators and labelled scenarios are test code', () => {
  const watch = readdirSync(join(root, 'src/watch'));
  expect(watch.filter((f) => /generat|scenario/.test(f))).toEqual([]);
});
