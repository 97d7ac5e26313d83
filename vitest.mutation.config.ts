// Mutation testing (stryker.config.mjs) runs only the suites that exercise the mutated modules in
// process: diagnosis, readings and the leak watch, without the files that drive the CLI as a child
// process (dev-eval scores through it too). A child process never sees Stryker's active mutant, so those
// tests cannot kill one; they only multiply the run time (hundreds of CLI starts per mutant).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { selectedGroup } from './scripts/mutation-groups.mjs';

const SPAWNS_CLI = /bin\/gpu-doctor|scoreDir\(/;
// One group's own test files when MUTATION_GROUP names it (scripts/mutation-groups.mjs says why those).
const include = selectedGroup()?.tests ?? [
  ...['test/diagnose', 'test/readings', 'test/watch'].flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.test.ts') && !SPAWNS_CLI.test(readFileSync(join(dir, f), 'utf8')))
      .map((f) => `${dir}/${f}`),
  ),
  // The kept-log redaction's shapes and non-shapes (the rest of test/feedback starts bots).
  'test/feedback/redact.test.ts',
  'test/feedback/secret-rules-mutants.test.ts',
  'test/feedback/secret-rules-shape.test.ts',
  // The Prometheus parser and the credential scrubber, in process (the rest of test/sources starts bots or servers).
  'test/sources/prometheus-parse.test.ts',
  'test/sources/prometheus-parse-mutants.test.ts',
  'test/sources/prometheus-group.test.ts',
  'test/sources/secret-scrub.test.ts',
  // Whether a chat message is a pasted log (src/core/paste.ts), through its one function.
  'test/core/paste-mutants.test.ts',
];

export default defineConfig({
  test: {
    include,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
