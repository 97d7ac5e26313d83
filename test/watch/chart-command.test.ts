// `/gpu chart HOST [GPU] [hours]` through the console chat (bin/gpu-doctor bot over a pipe), with the
// leak watch's store filled beforehand from labelled traces (test/watch/traces/generated.jsonl, seeded
// models of PyTorch's caching allocator; times moved so each trace ends a minute ago, as a live watch
// would hold them). The console writes the chart and prints its path.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { TRACES_PATH } from './generate-traces.js';
import { decodeTrace } from './generator.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import type { Sample } from '../../src/watch/types.js';

const run = promisify(execFile);
const BIN = resolve(__dirname, '../../bin/gpu-doctor');

let dir: string;
let filesDir: string;

/** The trace's samples shifted so its last one was taken at `endMs`. */
function endingAt(id: string, endMs: number): Sample[] {
  const trace = readFileSync(TRACES_PATH, 'utf8')
    .trim()
    .split('\n')
    .map(decodeTrace)
    .find((t) => t.id === id)!;
  const ms = (ts: string | number) => (typeof ts === 'number' ? ts : Date.parse(ts));
  const shift = endMs - Math.max(...trace.samples.map((s) => ms(s.ts)));
  return trace.samples.map((s) => ({
    ...s,
    ts: ms(s.ts) + shift,
    ...('processStart' in s && s.processStart !== undefined ? { processStart: ms(s.processStart) + shift } : {}),
  }));
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gd-chart-'));
  filesDir = join(dir, 'files');
  const store = WatchStore.inDataDir(join(dir, 'data'));
  const now = Date.now() - 60_000;
  store.insert([...endingAt('creep-shared-gpu', now), ...endingAt('ddp-8-flat', now)]);
  store.close();
  // gpu9 is registered but never answers (nothing listens on port 1): known, without samples.
  writeFileSync(
    join(dir, 'config.yaml'),
    `data_dir: ${join(dir, 'data')}
hosts:
  - name: gpu9
    host: 127.0.0.1
    port: 1
watch:
  enabled: true
  sample_interval_s: 600
  digests:
    - name: daily
      platform: console
      channel: console
      cron: "0 9 * * *"
      timezone: Europe/Berlin
`,
  );
});

async function chat(lines: string[]): Promise<string> {
  const child = run(process.execPath, [BIN, 'bot', '--config', join(dir, 'config.yaml')], {
    env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '', GPU_DOCTOR_FILES_DIR: filesDir },
    timeout: 120_000,
    maxBuffer: 16 << 20,
  });
  child.child.stdin!.end(lines.map((l) => `${l}\n`).join(''));
  return (await child).stdout;
}

const pngSize = (png: Buffer) => {
  expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
};

describe('/gpu chart in the console chat', () => {
  let out: string;
  beforeAll(async () => {
    out = await chat([
      '/gpu chart gpu-creep-shared-gpu 0 12',
      '/gpu chart gpu-ddp-8-flat 3 --theme dark',
      '/gpu chart gpu-ddp-8-flat',
      '/gpu chart nosuchhost',
      '/gpu chart gpu9',
      '/gpu chart gpu-creep-shared-gpu 64',
      '/gpu chart gpu-creep-shared-gpu 0 500',
      '/gpu chart gpu-creep-shared-gpu 0 0.5',
      '/gpu chart gpu-creep-shared-gpu 1',
      '/gpu chart gpu-ddp-8-flat all 12',
      '/gpu chart gpu-creep-shared-gpu all --theme dark',
      '/gpu chart gpu-ddp-8-flat every',
    ]);
  }, 180_000);

  const answer = (n: number) => out.split(/^(?=\[[i✓!✗]\] )/m).filter((b) => /^\[[i✓!✗]\] /.test(b))[n] ?? '';

  it('answers a GPU with a creep with a summary, the fit, and the chart written to a file', () => {
    const a = answer(0);
    expect(a).toContain('Chart gpu-creep-shared-gpu · GPU 0 (last 12 h)');
    expect(a).toMatch(/2 processes \(alice · pid 4242, bob · pid 6100\); [\d.]+ GiB of 79\.6 GiB used now/);
    expect(a).toMatch(/alice pid 4242 grows \+[\d.]+ MiB\/h, full in [\d.]+ d/);
    expect(a).toContain('times in Europe/Berlin');
    const path = /\(saved: (\/[^\n)]+\.png)\)/.exec(a)?.[1];
    expect(path).toBeDefined();
    expect(path!.startsWith(filesDir)).toBe(true);
    expect(pngSize(readFileSync(path!))).toEqual({ width: 1600, height: 1040 });
  });

  it('charts one rank of a flat 8-GPU job, dark, with no creep', () => {
    const a = answer(1);
    expect(a).toContain('Chart gpu-ddp-8-flat · GPU 3 (last 6 h)');
    expect(a).toContain('No memory creep found on this GPU.');
    expect(a).toMatch(/1 process \(alice · pid 7003\)/);
    const path = /\(saved: (\/[^\n)]+\.png)\)/.exec(a)![1];
    expect(pngSize(readFileSync(path))).toEqual({ width: 1600, height: 800 });
  });

  it('picks a GPU when none is named and names the others', () => {
    const a = answer(2);
    expect(a).toMatch(/Chart gpu-ddp-8-flat · GPU \d \(last 6 h\)/);
    expect(a).toMatch(/Other GPUs with samples: (\d, ){6}\d \(\/gpu chart gpu-ddp-8-flat GPU\)/);
  });

  it('says so for an unknown host and for a known host without samples, with no file', () => {
    expect(answer(3)).toContain('Unknown host "nosuchhost"');
    expect(answer(3)).toContain('Known hosts: gpu9');
    expect(answer(4)).toContain('No GPU samples for gpu9 in the last 6 h');
    expect(answer(3) + answer(4)).not.toContain('(saved:');
  });

  it('refuses a GPU index out of 0-63 and hours out of 1-168 with the usage', () => {
    for (const n of [5, 6, 7, 11]) expect(answer(n)).toContain('Usage: /gpu chart HOST [GPU] [hours]');
    expect(answer(5)).toContain('0-63');
    expect(answer(6)).toContain('1-168');
    expect(answer(7)).toContain('1-168');
  });

  it('says which GPUs have samples when the named one has none', () => {
    expect(answer(8)).toContain('No samples for GPU 1 of gpu-creep-shared-gpu in the last 6 h. GPUs with samples: 0.');
  });

  it("draws every GPU of a host as panels with `all`, and gives each GPU's reading now", () => {
    const a = answer(9);
    expect(a).toContain('Chart gpu-ddp-8-flat · every GPU (last 12 h)');
    expect(a).toContain('GPUs 0, 1, 2, 3, 4, 5, 6, 7 of gpu-ddp-8-flat, last 12 h (times in Europe/Berlin)');
    for (let g = 0; g < 8; g++) expect(a).toMatch(new RegExp(`^GPU ${g} · [\\d.]+ / 79\\.6 GiB · util \\d+%$`, 'm'));
    const path = /\(saved: (\/[^\n)]+-gpus-12h\.png)\)/.exec(a)?.[1];
    expect(path).toBeDefined();
    // Two columns of four panels, drawn at twice the CSS size.
    expect(pngSize(readFileSync(path!))).toEqual({ width: 1600, height: 1528 });
    const one = answer(10);
    expect(one).toContain('Chart gpu-creep-shared-gpu · every GPU (last 6 h)');
    expect(pngSize(readFileSync(/\(saved: (\/[^\n)]+\.png)\)/.exec(one)![1])).width).toBe(1600);
  });
});
