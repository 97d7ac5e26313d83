// Child for the kill -9 test: adds hosts (each with a trusted key) as fast as it can until killed.
import { HostRegistry } from '../../src/storage/sqlite/registry.js';

const reg = new HostRegistry(process.argv[2], []);
let i = 0;
process.stdout.write('started\n');
for (;;) {
  reg.add({ name: `h${i++}`, host: '127.0.0.1', port: 22, user: 'ml', hostKey: 'SHA256:' + 'A'.repeat(43) });
}
