// Mutation testing (stryker.config.mjs) runs only the suites that exercise the mutated modules in
// process: diagnosis, readings and the leak watch. The adapter, sshd and CLI-spawning suites cannot see
// Stryker's active mutant (it lives in this process) and only slow the run and add timing noise.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/diagnose/**/*.test.ts', 'test/readings/**/*.test.ts', 'test/watch/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
