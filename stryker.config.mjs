// Mutation testing of the core modules whose bugs would give a wrong answer silently (the fix
// arithmetic, the corrected command line, the free and nvidia-smi CSV parsers, the leak detector).
// `npm run test:mutation` (not part of `npm test`: it takes minutes); one module:
//   npx stryker run --mutate src/readings/free.ts
// JSON report: reports/mutation/mutation.json (per-file scores: scripts/mutation-summary.mjs).
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
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  tempDirName: '.stryker-tmp',
  // Re-runs test only what changed since the last run (mutants and tests), from this file.
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  concurrency: 2,
  timeoutMS: 20000,
  thresholds: { high: 90, low: 80, break: null },
};
