import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // vitest runs cores − 1 files at once, so one at a time on a 2-core CI machine; many suites spend their time
    // waiting on real servers (sshd, PostgreSQL, Prometheus, the bot's watch rounds), so two at a time there halves
    // the suite's wall time (stop 37: 525 s against about 1000 s) without a test timing anything.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
