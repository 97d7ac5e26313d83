// The house's layering rules and the import circles (scripts/layering.ts), checked on the real tree in
// `npm test`, and shown to catch what they are for: an import planted where a rule forbids it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkLayering, KNOWN_EXCEPTIONS, readSourceTree, RULES } from '../scripts/layering.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tree = readSourceTree(root);

/** The real tree with one more file. */
function planted(file: string, text: string): Map<string, string> {
  return new Map([...tree, [file, text]]);
}

describe('layering: each floor imports only the floors below it', () => {
  it('the source tree keeps every rule and has no import circle beyond the known ones', () => {
    expect(tree.size).toBeGreaterThan(100);
    expect(checkLayering(tree).failures).toEqual([]);
  });

  it('the nineteen rules are written once, each with its reason', () => {
    expect(RULES).toHaveLength(19);
    expect(new Set(RULES.map((rule) => `${rule.from}->${rule.to}`)).size).toBe(19);
    for (const rule of RULES) expect(rule.why.length).toBeGreaterThan(5);
  });

  it('an import from core/ into a wing fails the check, type-only too', () => {
    for (const text of [
      "import { rankFits } from '../fleet/fit.js';\nexport const f = rankFits;\n",
      "import type { OwnersService } from '../owners/directory.js';\nexport type O = OwnersService;\n",
      "export type G = import('../sources/prometheus/config.js').PrometheusGroupConfig;\n",
      "export { storageSchema } from '../storage/config.js';\n",
      "export const load = () => import('../hosts/ssh-pool.js');\n",
    ]) {
      const failures = checkLayering(planted('src/core/planted.ts', text)).failures;
      expect(failures, text).toHaveLength(1);
      expect(failures[0]).toMatch(
        /^Core \(src\/core\/\) never imports \w+ .*: ground floor: the core knows no wing; 1 import:\n {2}src\/core\/planted\.ts -> src\//,
      );
    }
  });

  it('a parser importing the catalogues fails; commands importing an adapter fail', () => {
    const fromReadings = checkLayering(planted('src/readings/planted.ts', "import { t } from '../core/i18n.js';\nexport const x = t;\n"));
    expect(fromReadings.failures).toEqual([expect.stringContaining('Readings (src/readings/) never imports Core (src/core/): parsers are pure')]);
    const fromCommands = checkLayering(
      planted('commands/planted.ts', "import type { SlackApp } from '../src/adapters/slack/app.js';\nexport type S = SlackApp;\n"),
    );
    expect(fromCommands.failures).toEqual([
      expect.stringContaining("Commands (commands/) never imports Adapters (src/adapters/): commands don't know the platform"),
    ]);
  });

  it('a known exception allows only its count: one import more fails', () => {
    const files = planted('src/watch/planted.ts', "import type { StorageConfig } from '../storage/config.js';\nexport type S = StorageConfig;\n");
    const broken = checkLayering(files).violations.filter((violation) => violation.rule.from === 'Watch' && violation.rule.to === 'Storage').length;
    expect(checkLayering(files, { exceptions: { ...KNOWN_EXCEPTIONS, 'Watch->Storage': { count: broken } }, cycles: 0 }).failures).toEqual([]);
    expect(checkLayering(files, { exceptions: { ...KNOWN_EXCEPTIONS, 'Watch->Storage': { count: broken - 1 } }, cycles: 0 }).failures).toEqual([
      expect.stringContaining('Watch (src/watch/) never imports Storage (src/storage/)'),
    ]);
  });

  it('hosts import nothing of the watch, type-only neither, and no allowance for one is kept', () => {
    expect(KNOWN_EXCEPTIONS['Hosts->Watch']).toBeUndefined();
    const failures = checkLayering(planted('src/hosts/planted.ts', "import type { Sample } from '../watch/types.js';\nexport type S = Sample;\n")).failures;
    expect(failures).toEqual([expect.stringContaining('Hosts (src/hosts/) never imports Watch (src/watch/): hosts answer readings, not samples; 1 import:')]);
  });

  it('feedback and the watch (its chart child too) import no storage, and no allowance for one is kept', () => {
    expect(KNOWN_EXCEPTIONS['Feedback->Storage']).toBeUndefined();
    expect(KNOWN_EXCEPTIONS['Watch->Storage']).toBeUndefined();
    const fromFeedback = checkLayering(
      planted('src/feedback/store.ts', "import { FeedbackStore } from '../storage/sqlite/feedback.js';\nexport const F = FeedbackStore;\n"),
    );
    expect(fromFeedback.failures).toEqual([
      expect.stringContaining('Feedback (src/feedback/) never imports Storage (src/storage/): store port: feedback owns its port; 1 import:'),
    ]);
    const child = 'src/watch/chart-render-child.ts';
    const fromChild = checkLayering(planted(child, `import { WatchStore } from '../storage/sqlite/watch.js';\n${tree.get(child)}`));
    expect(fromChild.failures).toEqual([
      expect.stringContaining(
        `Watch (src/watch/) never imports Storage (src/storage/): store port: the watch owns its port; Postgres implements it; 1 import:\n  ${child} -> src/storage/sqlite/watch.ts`,
      ),
    ]);
  });

  it('an allowance above what the tree breaks fails: a count goes down with the import that goes', () => {
    const stale = checkLayering(tree, { exceptions: { ...KNOWN_EXCEPTIONS, 'Hosts->Watch': { count: 1 } }, cycles: 0 }).failures;
    expect(stale).toContain('Hosts->Watch: 0 imports, KNOWN_EXCEPTIONS allows 1: lower it');
  });

  it('an import circle among src/ files fails and is named', () => {
    const files = planted('src/core/planted-a.ts', "import { b } from './planted-b.js';\nexport const a = () => b;\n");
    files.set('src/core/planted-b.ts', "import type { a } from './planted-a.js';\nexport const b = 1 as unknown as typeof a;\n");
    const report = checkLayering(files);
    expect(report.cycles).toContainEqual(['src/core/planted-a.ts', 'src/core/planted-b.ts']);
    expect(report.failures).toEqual([expect.stringMatching(/import circles among src\/ files[\s\S]*src\/core\/planted-a\.ts, src\/core\/planted-b\.ts/)]);
  });
});
