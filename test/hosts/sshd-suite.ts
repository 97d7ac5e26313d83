// The gate for suites that need real sshd (kept out of sshd-harness.ts, which the benchmarks import
// outside vitest).
import { describe, it } from 'vitest';
import { SSHD } from './sshd-harness.js';

/**
 * A suite that needs real sshd: skipped, saying so, where sshd is missing locally; under CI=true a
 * missing sshd is a failing test, never a skip.
 */
export function describeWithSshd(name: string, file: string, body: () => void): void {
  const CI = process.env.CI === 'true';
  if (!SSHD && !CI) console.warn(`${file}: skipped: sshd not found (apt-get install -y openssh-server)`);
  (SSHD || CI ? describe : describe.skip)(`${name}${SSHD ? '' : ' (skipped: sshd not found)'}`, () => {
    if (!SSHD) {
      it('needs sshd in CI', () => {
        throw new Error('sshd not found at /usr/sbin/sshd: CI must install openssh-server (see .ci/run)');
      });
      return;
    }
    body();
  });
}
