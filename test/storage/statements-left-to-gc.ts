// Child process for sqlite-driver.test.ts: SQLite statements left to the garbage collector while piped
// stdin is read, as the stores do (a statement prepared per call) while the console chat reads a paste.
// The collections then run in the microtask checkpoint after each read, outside any JavaScript context:
// a driver whose statements are node::ObjectWrap objects built against Node 24.19+ headers aborts there.
import Database from '../../src/storage/sqlite-driver.js';

const db = new Database(':memory:');
let statements = 0;
let chunks = 0;
let garbage: string[][] = [];
for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
  chunks++;
  for (let i = 0; i < 20; i++) db.prepare(`SELECT ${statements++ % 10} AS n`).get();
  // Enough short-lived objects (a string per byte) that collections run during the reads.
  garbage.push(chunk.toString('latin1').split(''));
  if (garbage.length > 4) garbage = [];
}
db.close();
console.log(`read ${chunks} chunks`);
