// The gate for suites that need a real PostgreSQL (kept out of pg-harness.ts, which the benchmark imports
// outside vitest).
import { describe, it } from 'vitest';
import { PG_BIN } from './pg-harness.js';

/**
 * A suite that needs PostgreSQL: skipped, saying so, where it is missing locally; under CI=true a missing
 * PostgreSQL is a failing test, never a skip.
 */
export function describeWithPostgres(name: string, file: string, body: () => void): void {
  const CI = process.env.CI === 'true';
  if (!PG_BIN && !CI) console.warn(`${file}: skipped: PostgreSQL not found (apt-get install -y postgresql)`);
  (PG_BIN || CI ? describe : describe.skip)(`${name}${PG_BIN ? '' : ' (skipped: PostgreSQL not found)'}`, () => {
    if (!PG_BIN) {
      it('needs PostgreSQL in CI', () => {
        throw new Error('initdb/postgres not found: CI must install postgresql (see .ci/run)');
      });
      return;
    }
    body();
  });
}
