// The training and serving tools of knowledge/tools.yaml: which one wrote a log, and that tool's own
// knobs (batch flag and default, how to turn on mixed precision, memory settings). Fixes quote these,
// so a YOLOv5 user reads `--batch-size`, an HF user `--per_device_train_batch_size`.
import RE2 from 're2';
import type { LogText } from './normalize.js';

export interface ToolInfo {
  id: string;
  name: string;
  /** re2 patterns; the first tool with a match wins. */
  detect: string[];
  /** A serving/inference tool: no batch to halve, no training AMP. */
  inference?: boolean;
  batch_flag?: string;
  batch_default?: number;
  batch_arg?: string;
  /** How to turn mixed precision on in this tool. */
  amp?: string;
  /** Mixed precision is already on unless the log turns it off. */
  amp_default_on?: boolean;
  knobs?: string[];
  source: string;
}

export interface CompiledTools {
  tools: ToolInfo[];
  /** detect pattern -> tool index, in file order. */
  patterns: { tool: number; regex: RE2 }[];
}

export function compileTools(tools: ToolInfo[], file = 'knowledge/tools.yaml'): CompiledTools {
  const patterns: CompiledTools['patterns'] = [];
  tools.forEach((t, i) =>
    t.detect.forEach((source, j) => {
      try {
        patterns.push({ tool: i, regex: new RE2(source, 'i') });
      } catch (e) {
        throw new Error(`${file}: ${t.id}: detect.${j}: not a valid re2 pattern: ${(e as Error).message}`, { cause: e });
      }
    }),
  );
  return { tools, patterns };
}

/** The tool that wrote the log: the earliest tool in the file with any detect match (re2: linear). */
export function detectTool(log: LogText, compiled: CompiledTools | undefined): ToolInfo | undefined {
  if (!compiled) return undefined;
  let best: number | undefined;
  for (const p of compiled.patterns) {
    if (best !== undefined && p.tool >= best) break;
    if (p.regex.test(log.buf)) best = p.tool;
  }
  return best === undefined ? undefined : compiled.tools[best];
}
