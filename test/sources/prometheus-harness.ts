// A real Prometheus (Debian's `prometheus` package: the plain binary, never its service) on a random
// 127.0.0.1 port with a temporary config and TSDB, scraping local HTTP targets that serve the real
// exporter output in test/fixtures/prometheus every second. The server half is in prometheus-server.ts
// (no vitest there, so the benchmarks share it); this file adds the suite wrapper.
import { describe, it } from 'vitest';
import { SSHD } from '../hosts/sshd-harness.js';
import { PROMETHEUS } from './prometheus-server.js';

export { PROMETHEUS, PROMTOOL, serveMetrics, startPrometheus, waitForSeries, type PrometheusInstance } from './prometheus-server.js';

/**
 * A suite that needs a real Prometheus (and sshd, to compare with the SSH path): skipped, saying so,
 * where either is missing locally; under CI=true a missing one is a failing test, never a skip.
 */
export function describeWithPrometheus(name: string, file: string, body: () => void): void {
  const CI = process.env.CI === 'true';
  const missing = [!PROMETHEUS && 'prometheus (apt-get install -y prometheus)', !SSHD && 'sshd (apt-get install -y openssh-server)'].filter(Boolean);
  if (missing.length && !CI) console.warn(`${file}: skipped: ${missing.join(', ')} not found`);
  (!missing.length || CI ? describe : describe.skip)(`${name}${missing.length ? ` (skipped: ${missing.join(', ')} not found)` : ''}`, () => {
    if (missing.length) {
      it('needs prometheus and sshd in CI', () => {
        throw new Error(`${missing.join(', ')} not found: CI must install them (see .ci/run)`);
      });
      return;
    }
    body();
  });
}
