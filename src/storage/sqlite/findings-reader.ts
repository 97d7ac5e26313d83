// The SQLite watch store as the findings worker (src/watch/findings-worker.ts) reads it: the worker
// imports this module by the URL the store's findingsInput names and opens the store's file with its
// own connection. From the bundle it is dist/sqlite-findings-reader.mjs.
import type { SummaryReaderModule } from '../../watch/state.js';
import { WatchStore } from './watch.js';

export const openSummaryReader: SummaryReaderModule['openSummaryReader'] = (file) => new WatchStore(file);
