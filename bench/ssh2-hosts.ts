// A child process for bench:fanout: N ssh2 servers on 127.0.0.1 (one ed25519 host key each, public
// key auth for one client key, signatures verified), each behind its own delaying TCP proxy, answering
// only the bot's fixed commands (and OpenSSH's `nvidia-smi --query-gpu=...`) from the real fixtures.
// It stands in for N separate GPU machines: no fork per session, so the 2 CPUs here measure the
// client and the link, not 32 sshd + shell start-ups competing with it.
// Usage: node --import tsx bench/ssh2-hosts.ts N DELAY_MS CLIENT_PUB_FILE; prints one JSON line, runs
// until stdin closes.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { MEM_COMMAND, SECTION_MARK, SMI_GPU_ARGS, STATUS_COMMAND } from '../src/hosts/remote-commands.js';
import { startDelayProxy } from '../test/hosts/delay-proxy.js';
import { fixtureData, fixturesDir } from '../test/hosts/sshd-harness.js';

const { Server, utils } = ssh2;
const [n, delayMs, pubFile] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
const parsedKey = utils.parseKey(readFileSync(pubFile));
if (parsedKey instanceof Error) throw parsedKey;
const clientKey: ssh2.ParsedKey = Array.isArray(parsedKey) ? parsedKey[0] : parsedKey;
const clientBlob = clientKey.getPublicSSH();

const data = fixtureData('h200');
const free = readFileSync(join(fixturesDir, 'free/17-free-b-6gb.txt'), 'utf8');
const mark = (name: string) => `${SECTION_MARK} ${name} 0\n`;
const answers = new Map<string, { out: string; code: number }>([
  [STATUS_COMMAND, { out: data.gpuCsv + mark('gpu') + data.appsCsv + mark('apps') + free + mark('free') + data.psTxt + mark('ps'), code: 0 }],
  [MEM_COMMAND, { out: free + mark('free'), code: 0 }],
  [`nvidia-smi ${SMI_GPU_ARGS.join(' ')}`, { out: data.gpuCsv, code: 0 }],
  // What the bench runs once to open OpenSSH's multiplexing master before timing it.
  ['true', { out: '', code: 0 }],
]);

function startHost(): Promise<{ port: number; fingerprint: string; keyLine: string }> {
  // ssh2's generator now and then writes an ed25519 key its own parser calls malformed: drawn again.
  let key = utils.generateKeyPairSync('ed25519');
  for (let tries = 0; utils.parseKey(key.private) instanceof Error && tries < 20; tries++) key = utils.generateKeyPairSync('ed25519');
  const keyLine = key.public.split(' ').slice(0, 2).join(' ');
  const fingerprint =
    'SHA256:' +
    createHash('sha256')
      .update(Buffer.from(keyLine.split(' ')[1], 'base64'))
      .digest('base64')
      .replace(/=+$/, '');
  const server = new Server({ hostKeys: [key.private] }, (client) => {
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'publickey') return ctx.reject(['publickey']);
      const blob = ctx.key.data;
      if (ctx.key.algo !== clientKey.type || blob.length !== clientBlob.length || !timingSafeEqual(blob, clientBlob)) return ctx.reject(['publickey']);
      if (!ctx.signature) return ctx.accept(); // the "would this key do?" query
      if (clientKey.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) === true) ctx.accept();
      else ctx.reject(['publickey']);
    });
    client.on('ready', () => {
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        session.on('exec', (accept, _reject, info) => {
          const ch = accept();
          const a = answers.get(info.command) ?? { out: '', code: 127 };
          if (a.code === 127) ch.stderr.write(`sh: 1: not a fixed command\n`);
          ch.write(a.out);
          ch.exit(a.code);
          ch.end();
        });
      });
    });
  });
  return new Promise((resolve, reject) =>
    server.listen(0, '127.0.0.1', () => {
      startDelayProxy((server.address() as { port: number }).port, delayMs).then((proxy) => resolve({ port: proxy.port, fingerprint, keyLine }), reject);
    }),
  );
}

const hosts = [];
for (let i = 0; i < n; i++) hosts.push(await startHost());
process.stdout.write(JSON.stringify({ hosts }) + '\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
