// Child process for ssh-crypto.test.ts: the ciphers ssh2 makes for each SSH connection (createCipher and
// createDecipher, as its key exchange calls them), left to the garbage collector while piped stdin is
// read, as they are after a connection closes. With ssh2's native binding built against Node 24.19+
// headers the collections that run after each read, outside any JavaScript context, abort the process.
import { createRequire } from 'node:module';

interface CipherModule {
  CIPHER_INFO: Record<string, unknown>;
  createCipher(config: unknown): unknown;
  createDecipher(config: unknown): unknown;
  bindingAvailable: boolean;
}
const ssh2Crypto = createRequire(import.meta.url)('ssh2/lib/protocol/crypto.js') as CipherModule;
const cipherInfo = ssh2Crypto.CIPHER_INFO['chacha20-poly1305@openssh.com'];
const key = Buffer.alloc(64, 7);
let ciphers = 0;
let chunks = 0;
let garbage: string[][] = [];
for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
  chunks++;
  for (let i = 0; i < 10; i++) {
    ssh2Crypto.createCipher({ outbound: { onWrite() {}, cipherInfo, cipherKey: key, seqno: 0 } });
    ssh2Crypto.createDecipher({ inbound: { onPayload() {}, decipherInfo: cipherInfo, decipherKey: key, seqno: 0 } });
    ciphers += 2;
  }
  // Enough short-lived objects (a string per byte) that collections run during the reads.
  garbage.push(chunk.toString('latin1').split(''));
  if (garbage.length > 4) garbage = [];
}
console.log(`read ${chunks} chunks, ${ciphers} ciphers (native binding: ${ssh2Crypto.bindingAvailable})`);
