// Renders the README's chart examples (docs/images/*.png) through the bot's own code paths: samples go
// into a leak-watch store, the digest's findings and chart come from it as a scheduled digest draws
// them, and `/gpu chart` answers from it as in chat.
//
// The series are the project's labelled traces (test/watch/traces/generated.jsonl, written by
// test/watch/generate-traces.ts): seeded models of what nvidia-smi shows of PyTorch's caching allocator,
// the same data the detector's tests score. The repository holds no recorded GPU memory time series, so
// the pictures are labelled as drawn from these traces, not from a real host.
//   npm run charts:readme
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findingChartFromStore, gpuChartReply } from '../src/watch/chart-store.js';
import { digestReply } from '../src/watch/digest.js';
import { findingsFromStore } from '../src/watch/findings.js';
import { TRACES_PATH } from '../test/watch/generate-traces.js';
import { decodeTrace } from '../test/watch/generator.js';
import { WatchStore } from '../src/storage/sqlite/watch.js';
import type { ReplyFile } from '../src/core/reply.js';
import { tempWatchStore } from '../test/storage/sqlite-stores.js';

const OUT = 'docs/images';
const TIME_ZONE = 'Europe/Berlin';
const traces = readFileSync(TRACES_PATH, 'utf8').trim().split('\n').map(decodeTrace);

/** A store holding one trace, and the time one poll after its last sample. */
function storeOf(id: string): { store: WatchStore; now: number } {
  const trace = traces.find((t) => t.id === id);
  if (!trace) throw new Error(`no trace ${id} in ${TRACES_PATH}`);
  const store = tempWatchStore();
  store.insert(trace.samples);
  const last = Math.max(...trace.samples.map((s) => (typeof s.ts === 'number' ? s.ts : Date.parse(s.ts))));
  return { store, now: last + 60_000 };
}

function save(name: string, file: ReplyFile | undefined): void {
  if (!file) throw new Error(`${name}: no chart was drawn`);
  writeFileSync(join(OUT, name), file.data);
  console.log(`${join(OUT, name)}  ${file.data.length} bytes  ${file.data.readUInt32BE(16)}x${file.data.readUInt32BE(20)}`);
}

/** The digest's attached chart, as a scheduled digest in TIME_ZONE would post it. */
function digestChart(id: string, name: string): void {
  const { store, now } = storeOf(id);
  const { findings, watched } = findingsFromStore(store, {}, now);
  const reply = digestReply(findings, watched, undefined, 'Leak watch digest', findingChartFromStore(store, { timeZone: TIME_ZONE }, now));
  save(name, reply.files?.[0]);
  store.close();
}

mkdirSync(OUT, { recursive: true });
digestChart('creep-shared-gpu', 'digest-steady-leak.png');
digestChart('creep-50-seg20-sawtooth', 'digest-validation-sawtooth.png');
{
  const { store, now } = storeOf('rank0-validation-steps');
  const reply = gpuChartReply(store, { host: 'gpu-rank0-validation-steps', gpu: 0, hours: 12, theme: 'dark' }, { timeZone: TIME_ZONE }, {}, undefined, now);
  console.log(reply.sections[0].text);
  save('gpu-chart-dark.png', reply.files?.[0]);
  store.close();
}
