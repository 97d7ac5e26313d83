// Writes the labelled trace set to test/watch/traces/generated.jsonl (one trace per line), so the
// evaluation reads fixed numbers. Run: npx tsx test/watch/generate-traces.ts [seed]
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeTrace } from './generator.js';
import { generateTraces } from './trace-scenarios.js';

export const TRACES_PATH = resolve(dirname(fileURLToPath(import.meta.url)), 'traces/generated.jsonl');

export function renderTraces(seed = 1): string {
  return generateTraces(seed).map(encodeTrace).join('\n') + '\n';
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = renderTraces(Number(process.argv[2] ?? 1));
  mkdirSync(dirname(TRACES_PATH), { recursive: true });
  writeFileSync(TRACES_PATH, text);
  console.log(`wrote ${text.split('\n').length - 1} traces, ${(text.length / 1e6).toFixed(2)} MB to ${TRACES_PATH}`);
}
