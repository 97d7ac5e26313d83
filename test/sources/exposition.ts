// Reads the Prometheus text exposition fixtures in test/fixtures/prometheus into instant-query results
// (what /api/v1/query answers after a scrape adds `instance` and `job`), for the parser's unit tests.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PromVectorSample } from '../../src/sources/prometheus/parse.js';

export const promFixtures = resolve(import.meta.dirname, '../fixtures/prometheus');

export const fixtureText = (name: string): string => readFileSync(join(promFixtures, name), 'utf8');

export function exposition(text: string, extra: Record<string, string> = {}, at = 1_764_000_000): PromVectorSample[] {
  const out: PromVectorSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const metric: Record<string, string> = { __name__: m[1], ...extra };
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) metric[l[1]] = l[2].replace(/\\(.)/g, '$1');
    out.push({ metric, value: [at, m[3]] });
  }
  return out;
}
