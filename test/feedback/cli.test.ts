// `gpu-doctor feedback list [--days N] [--json]` reads what the bot stored in data_dir/feedback.sqlite.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FeedbackStore } from '../../src/storage/sqlite/feedback.js';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');

describe('gpu-doctor feedback list', () => {
  it("lists the window's 👎 and unmatched diagnoses with their kept logs, as JSON and as text", async () => {
    const root = mkdtempSync(join(tmpdir(), 'gd-fb-cli-'));
    const data = join(root, 'data');
    const config = join(root, 'gpu-doctor.yaml');
    writeFileSync(config, `data_dir: ${data}\nfeedback:\n  keep_logs: true\n`);
    const store = FeedbackStore.inDataDir(data, { keepLogs: true });
    const down = store.record({ platform: 'slack', userId: 'U1', rule: 'cuda-oom', category: 'cuda_oom', log: 'RuntimeError: CUDA out of memory.' });
    store.vote({ id: down, platform: 'slack', userId: 'U2', vote: 'down' });
    const unmatched = store.record({ platform: 'discord', userId: '1', rule: null, category: null, log: 'ValueError: x' });
    const old = store.record({ platform: 'slack', userId: 'U1', rule: null, category: null, log: 'ValueError: old' }, Date.now() - 10 * 86_400_000);
    store.close();
    const { stdout } = await run(BIN, ['feedback', 'list', '--json', '--config', config]);
    const report = JSON.parse(stdout);
    expect(report.days).toBe(7);
    expect(report.items.map((i: { id: string }) => i.id).sort()).toEqual([down, unmatched].sort());
    expect(report.items.every((i: { logFile: string }) => existsSync(i.logFile))).toBe(true);
    expect(report.rules).toEqual(expect.arrayContaining([{ rule: 'cuda-oom', category: 'cuda_oom', diagnoses: 1, up: 0, down: 1 }]));
    const wider = JSON.parse((await run(BIN, ['feedback', 'list', '--days', '14', '--json', '--config', config])).stdout);
    expect(wider.items.map((i: { id: string }) => i.id)).toContain(old);
    const text = (await run(BIN, ['feedback', 'list', '--config', config])).stdout;
    expect(text).toContain('Votes per rule');
    expect(text).toContain('knowledge new RULE-ID --from FILE');
    // The loop closes: a kept log seeds a new rule.
    const kept = report.items.find((i: { id: string }) => i.id === unmatched).logFile;
    const knowledge = join(root, 'knowledge');
    const made = await run(BIN, ['knowledge', 'new', 'config-field', '--from', kept, '--dir', knowledge]);
    expect(made.stdout).toContain('created');
    expect(existsSync(join(knowledge, 'config-field', 'rule.yaml'))).toBe(true);
  }, 60_000);

  it('nothing recorded yet (no feedback.sqlite): says so, as text and as JSON, and creates nothing', async () => {
    const root = mkdtempSync(join(tmpdir(), 'gd-fb-cli-none-'));
    const config = join(root, 'gpu-doctor.yaml');
    writeFileSync(config, `data_dir: ${join(root, 'data')}\n`);
    const text = (await run(BIN, ['feedback', 'list', '--config', config])).stdout;
    expect(text).toBe(`No feedback recorded yet (no ${join(root, 'data', 'feedback.sqlite')}).\n`);
    const report = JSON.parse((await run(BIN, ['feedback', 'list', '--json', '--days', '3', '--config', config])).stdout);
    expect(report).toMatchObject({ days: 3, keepLogs: false, rules: [], items: [] });
    expect(existsSync(join(root, 'data', 'feedback.sqlite'))).toBe(false);
  }, 60_000);

  it('a bad --days is a usage error (exit 2)', async () => {
    await expect(run(BIN, ['feedback', 'list', '--days', '0'])).rejects.toMatchObject({ code: 2 });
  }, 30_000);
});
