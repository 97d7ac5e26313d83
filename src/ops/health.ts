// Optional HTTP endpoint: /healthz (per-adapter connection state, per-host pool state) and /metrics.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

export type AdapterState = 'starting' | 'connected' | 'disconnected' | 'stopped';

export class Health {
  readonly adapters = new Map<string, AdapterState>();
  /** Filled by the hosts pool when present: name -> state (e.g. "idle", "connected", "error: ..."). */
  hostStates?: () => Record<string, string>;
  constructor(private metrics?: Metrics) {}

  set(adapter: string, state: AdapterState): void {
    this.adapters.set(adapter, state);
    this.metrics?.adapterUp.set({ adapter }, state === 'connected' ? 1 : 0);
  }

  snapshot(): { ok: boolean; adapters: Record<string, AdapterState>; hosts?: Record<string, string> } {
    const adapters = Object.fromEntries(this.adapters);
    const ok = [...this.adapters.values()].every((s) => s === 'connected');
    return { ok, adapters, ...(this.hostStates ? { hosts: this.hostStates() } : {}) };
  }
}

export async function startHealthServer(o: {
  port: number;
  host: string;
  health: Health;
  metrics: Metrics;
}): Promise<{ server: Server; port: number; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      const snap = o.health.snapshot();
      res.writeHead(snap.ok ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify(snap));
    } else if (path === '/metrics') {
      o.metrics.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': o.metrics.registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
