// What a chart child draws: a per-GPU or finding chart (chart.ts) or a host's panels (host-chart.ts).
// One entry for both, so the child's checks (spec, then SVG) and its time budget cover every kind.
import { chartSize, PIXEL_RATIO, renderChartSvg, renderOptionSvg, svgToPng, type MemoryChartSpec } from './chart.js';
import { specProblem } from './chart-geometry.js';
import { hostChartOption, hostChartSize, hostSpecProblem, type HostChartSpec } from './host-chart.js';

export type AnyChartSpec = MemoryChartSpec | HostChartSpec;

const isHost = (spec: AnyChartSpec): spec is HostChartSpec => 'kind' in spec && spec.kind === 'host';

/** Why this spec must not be drawn, or null (bounded sizes, counts, text and numbers). */
export function anySpecProblem(spec: AnyChartSpec): string | null {
  return isHost(spec) ? hostSpecProblem(spec) : specProblem(spec);
}

export function anyChartSize(spec: AnyChartSpec): { width: number; height: number } {
  return isHost(spec) ? hostChartSize(spec) : chartSize(spec);
}

export function anyChartSvg(spec: AnyChartSpec): string {
  return isHost(spec) ? renderOptionSvg(hostChartOption(spec), hostChartSize(spec)) : renderChartSvg(spec);
}

/** Drawn in this process (the README's pictures, tests); the bot draws in a child (chart-render.ts). */
export function drawAnyChart(spec: AnyChartSpec, pixelRatio = PIXEL_RATIO): { svg: string; png: Buffer } {
  const svg = anyChartSvg(spec);
  return { svg, png: svgToPng(svg, Math.round(anyChartSize(spec).width * pixelRatio)).png };
}
