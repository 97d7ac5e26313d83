// The SQLite watch store as a chart child reads it: the child (src/watch/chart-render-child.ts) imports
// this module by the URL the store's chart source names and opens the store's file with its own
// connection, so a week of samples is never copied through the bot's process. From the bundle it is
// dist/sqlite-chart-reader.mjs.
import type { ChartReaderModule } from '../../watch/chart-render.js';
import { WatchStore } from './watch.js';

export const openChartSamples: ChartReaderModule['openChartSamples'] = (file) => {
  const store = new WatchStore(file);
  return { samplesSince: (sinceMs, host) => store.samplesSince(sinceMs, host), close: () => store.close() };
};
