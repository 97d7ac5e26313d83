// A small TCP proxy for fault injection (tc netem is not available here): forwards 127.0.0.1:port to
// an upstream port, holding every chunk back `delayMs` in each direction (order kept: Node fires
// timers of one duration first-in first-out), and can cut every live connection at once.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface DelayProxy {
  port: number;
  /** Connections accepted so far (a reconnect shows as +1). */
  readonly accepted: number;
  /** Connections currently open. */
  readonly open: number;
  /** Destroys both sockets of every open connection (a dropped link / rebooted middlebox). */
  dropAll(): void;
  /** New connections go to this upstream port from now on (another machine answering the address). */
  retarget(upstreamPort: number): void;
  close(): Promise<void>;
}

export async function startDelayProxy(upstreamPort: number, delayMs: number, upstreamHost = '127.0.0.1'): Promise<DelayProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let accepted = 0;
  const pipe = (from: Socket, to: Socket) => {
    from.on('data', (d: Buffer) => {
      if (delayMs <= 0) to.write(d);
      else setTimeout(() => to.destroyed || to.write(d), delayMs);
    });
    from.on('end', () => (delayMs <= 0 ? to.end() : setTimeout(() => to.end(), delayMs)));
    from.on('close', () => setTimeout(() => to.destroy(), delayMs));
    from.on('error', () => undefined);
  };
  const server: Server = createServer({ noDelay: true }, (client) => {
    accepted++;
    const upstream = connect({ host: upstreamHost, port: upstreamPort, noDelay: true });
    upstream.on('error', () => client.destroy());
    client.setNoDelay(true);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const forget = () => pairs.delete(pair);
    client.on('close', forget);
    upstream.on('close', forget);
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const proxy: DelayProxy = {
    port: (server.address() as { port: number }).port,
    get accepted() {
      return accepted;
    },
    get open() {
      return pairs.size;
    },
    retarget(port: number) {
      upstreamPort = port;
    },
    dropAll() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
    },
    close() {
      proxy.dropAll();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
  return proxy;
}
