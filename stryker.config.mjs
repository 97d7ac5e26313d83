// Mutation testing of the core modules whose bugs would give a wrong answer silently (the fix
// arithmetic, the corrected command line, the free and nvidia-smi CSV parsers, the leak detector).
// `npm run test:mutation` runs one group of modules at a time with only its own test files
// (scripts/mutation-groups.mjs); one group: MUTATION_GROUP=readings npx stryker run. Without
// MUTATION_GROUP, every module below against the whole in-process suite (hours on two cores).
// JSON report: reports/mutation/GROUP.json or mutation.json (per-file scores: scripts/mutation-summary.mjs).
import { selectedGroup } from './scripts/mutation-groups.mjs';

const group = selectedGroup();
// MUTATION_REPORT names the reports of a run over part of a group (--mutate FILE:LINES), not to overwrite the group's.
const reportName = process.env.MUTATION_REPORT ?? (group ? group.name : 'mutation');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  coverageAnalysis: 'perTest',
  mutate: [
    'src/diagnose/fixes/arithmetic.ts',
    'src/diagnose/fixes/command-line.ts',
    'src/readings/free.ts',
    'src/readings/nvidia-smi-csv.ts',
    'src/watch/detector.ts',
    'src/watch/growth.ts',
    // Whether a chat message is a pasted log (runs on every message; a wrong answer is silent).
    'src/core/paste.ts',
    // What a Prometheus answer may hold (one bad item must cost itself), and the credential scrubber.
    'src/sources/prometheus/parse.ts',
    'src/core/secret-scrub.ts',
    // What a kept log may hold once redacted (a missed shape leaks a credential to the admins' channel).
    'src/feedback/redact.ts',
    'src/feedback/secret-rules.ts',
  ],
  ...(group ? { mutate: group.mutate } : {}),
  // progress-file: each mutant's result as it is tested (reports/mutation/GROUP.progress.jsonl).
  appendPlugins: ['./scripts/stryker-progress-file.mjs'],
  reporters: ['clear-text', 'progress', 'json', 'html', 'progress-file'],
  jsonReporter: { fileName: `reports/mutation/${reportName}.json` },
  htmlReporter: { fileName: `reports/mutation/${reportName}.html` },
  // One sandbox and one incremental file per group, so groups can run side by side.
  tempDirName: group ? `.stryker-tmp-${reportName}` : '.stryker-tmp',
  // Stryker leaves out only its own sandbox: another group's, copied mid-run, fails the copy.
  ignorePatterns: ['/.stryker-tmp*/'],
  // Re-runs test only what changed since the last run (mutants and tests), from this file.
  incremental: true,
  incrementalFile: group ? `reports/stryker-incremental-${reportName}.json` : 'reports/stryker-incremental.json',
  concurrency: 2,
  timeoutMS: 20000,
  thresholds: { high: 90, low: 80, break: null },
};
