// The SQLite driver every SQLite store opens its file with: better-sqlite3 13 (installed as
// better-sqlite3-napi; Node-API, prebuilt) where Node has Node-API 10 (Node 22 and 24), better-sqlite3 12
// (compiled on install against this Node's headers) on Node 20, which 13 does not load on.
//
// Why not 12 everywhere: its Database, Statement and iterator objects derive from node::ObjectWrap, whose
// header-only code, compiled against Node 24.19+'s headers, removes an environment cleanup hook in its
// destructor and aborts the process (`Assertion failed: (env) != nullptr` in
// node::RemoveEnvironmentCleanupHook) when a garbage collection that runs outside any JavaScript context
// (V8's idle and memory-reducer tasks, worker teardown) frees one (nodejs/node#65446). Any statement left
// to the collector could end the bot at a random moment. 13 wraps its objects through Node-API instead.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/** The package the stores load: the Node-API build where this Node has Node-API 10, else the compiled one. */
export const SQLITE_DRIVER = Number(process.versions.napi) >= 10 ? 'better-sqlite3-napi' : 'better-sqlite3';

// One JavaScript API in both (13 changed how it is built, not how it is called): 12's types describe both.
const Database = createRequire(import.meta.url)(SQLITE_DRIVER) as typeof BetterSqlite3;

// The types under the same name as the constructor, as `import Database from 'better-sqlite3'` gives them.
// eslint-disable-next-line @typescript-eslint/no-namespace -- a type-only namespace, merged with the constructor
declare namespace Database {
  type Database = BetterSqlite3.Database;
  type Statement<BindParameters extends unknown[] | object = unknown[], Result = unknown> = BetterSqlite3.Statement<BindParameters, Result>;
  type Options = BetterSqlite3.Options;
}

export default Database;
