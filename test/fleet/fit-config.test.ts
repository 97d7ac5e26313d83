// The config's `fit` and `notify` sections: defaults, bounds with their own messages, and a typo named
// with the nearest key and its YAML line, like every other section.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fitConfigOf, loadConfig, parseConfig } from '../../src/config.js';

const problems = (doc: unknown): string => {
  try {
    parseConfig(doc);
    return '';
  } catch (e) {
    return (e as Error).message;
  }
};

describe('fit and notify settings', () => {
  it('default to a 1 GiB / 5% margin and 3 open subscriptions per user', () => {
    expect(fitConfigOf(parseConfig({}))).toEqual({ marginMiB: 1024, marginPct: 5, maxNotifyPerUser: 3 });
    expect(fitConfigOf(parseConfig({ fit: { margin_mib: 0, margin_pct: 10 }, notify: { max_per_user: 1 } }))).toEqual({
      marginMiB: 0,
      marginPct: 10,
      maxNotifyPerUser: 1,
    });
  });

  it('out-of-range values are named with what is expected', () => {
    const m = problems({ fit: { margin_mib: -1, margin_pct: 80 }, notify: { max_per_user: 0 } });
    expect(m).toContain('fit.margin_mib: MiB kept free on every GPU: 0-65536');
    expect(m).toContain('fit.margin_pct: percent of the card kept free: 0-50');
    expect(m).toContain('notify.max_per_user: open `/gpu notify` subscriptions per user: 1-100');
    expect(problems({ notify: { max_per_user: 2.5 } })).toContain('notify.max_per_user: a whole number');
  });

  it('a typo is named with the nearest key and its line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-fit-cfg-'));
    const file = join(dir, 'gpu-doctor.yaml');
    writeFileSync(file, ['fit:', '  margin_mb: 2048', 'notify:', '  max_per_usr: 5', ''].join('\n'));
    expect(() => loadConfig(file)).toThrow(/fit: unknown key "margin_mb" \(did you mean "margin_mib"\?\) \(line 2\)/);
    expect(() => loadConfig(file)).toThrow(/notify: unknown key "max_per_usr" \(did you mean "max_per_user"\?\) \(line 4\)/);
  });
});
