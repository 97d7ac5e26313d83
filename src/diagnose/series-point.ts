// One figure of a memory series a tool printed: its own module, so the readers of each tool's series
// (memory-series.ts and the per-tool files it calls) share the type without importing each other.
export interface SeriesPoint {
  mib: number;
  /** The epoch the tool printed with the figure, when it did. */
  epoch?: number;
}
