// The training and serving tools of knowledge/tools.yaml: which one wrote a log, and that tool's own
// knobs (batch flag and default, how to turn on mixed precision, memory settings). Fixes quote these,
// so a YOLOv5 user reads `--batch-size`, an HF user `--per_device_train_batch_size`.
import RE2 from 're2';
import type { LogText } from './normalize.js';
import { compileClis, type CompiledCli, type ToolCli } from './tool-cli.js';

export interface ToolInfo {
  id: string;
  name: string;
  /** re2 patterns; the first tool with a match wins. */
  detect: string[];
  /** The flags of its command line (launcher or script), for rewritten commands. */
  cli?: ToolCli;
  /** A serving/inference tool: no batch to halve, no training AMP. */
  inference?: boolean;
  batch_flag?: string;
  batch_default?: number;
  batch_arg?: string;
  /** How to turn mixed precision on in this tool. */
  amp?: string;
  /** Mixed precision is already on unless the log turns it off. */
  amp_default_on?: boolean;
  weights_split?: string;
  knobs?: string[];
  /** Knobs that come first when `present` matches the log (the first ones are already turned). */
  escalate?: { present: string; knobs: string[] }[];
  /** The texts in Simplified Chinese (knobs and escalation knobs item by item); English where absent. */
  zh?: { batch_flag?: string; amp?: string; weights_split?: string; knobs?: string[]; escalate?: string[][] };
  source: string;
}

/** A tool knob (as knobsFor gives it) in Simplified Chinese where tools.yaml gives one, else as written. */
export function knobInZh(tool: ToolInfo, knob: string): string {
  const i = tool.knobs?.indexOf(knob) ?? -1;
  if (i >= 0) return tool.zh?.knobs?.[i] ?? knob;
  for (const [j, e] of (tool.escalate ?? []).entries()) {
    const k = e.knobs.indexOf(knob);
    if (k >= 0) return tool.zh?.escalate?.[j]?.[k] ?? knob;
  }
  return knob;
}

export interface CompiledTools {
  tools: ToolInfo[];
  /** detect pattern -> tool index, in file order. */
  patterns: { tool: number; regex: RE2 }[];
  /**
   * Every detect pattern in one RE2.Set (same order as `patterns`): one linear pass over the log says which match,
   * where a pass per pattern cost ~35 ms each on a 20 MB paste. Absent when the set does not compile within re2's
   * memory budget: then each pattern is tried alone.
   */
  detectSet?: InstanceType<typeof RE2.Set>;
  /** Per tool, its escalation patterns compiled (same order as `escalate`). */
  escalations: (RE2[] | undefined)[];
  /** The tools' command-line interfaces, compiled. */
  clis: CompiledCli[];
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
  const escalations = tools.map((t) =>
    t.escalate?.map((e, j) => {
      try {
        return new RE2(e.present, 'i');
      } catch (err) {
        throw new Error(`${file}: ${t.id}: escalate.${j}.present: not a valid re2 pattern: ${(err as Error).message}`, { cause: err });
      }
    }),
  );
  let clis: CompiledCli[];
  try {
    clis = compileClis(tools);
  } catch (e) {
    throw new Error(`${file}: cli: not a valid re2 pattern: ${(e as Error).message}`, { cause: e });
  }
  let detectSet: CompiledTools['detectSet'];
  try {
    const sources = tools.flatMap((t) => t.detect);
    detectSet = sources.length ? new RE2.Set(sources, 'i') : undefined;
  } catch {
    detectSet = undefined;
  }
  return { tools, patterns, escalations, clis, ...(detectSet ? { detectSet } : {}) };
}

/** The tool that wrote the log: the earliest tool in the file with any detect match (re2: linear). */
export function detectTool(log: LogText, compiled: CompiledTools | undefined): ToolInfo | undefined {
  if (!compiled) return undefined;
  let best: number | undefined;
  if (compiled.detectSet) {
    for (const i of compiled.detectSet.match(log.buf)) best = Math.min(best ?? Infinity, compiled.patterns[i].tool);
    return best === undefined ? undefined : compiled.tools[best];
  }
  for (const p of compiled.patterns) {
    if (best !== undefined && p.tool >= best) break;
    if (p.regex.test(log.buf)) best = p.tool;
  }
  return best === undefined ? undefined : compiled.tools[best];
}

// A line that starts a program (python ..., webui.sh, launch.py, COMMANDLINE_ARGS=...) or lists its
// arguments (a sysinfo JSON's "--medvram" entries), in backticks or not.
const INVOCATION =
  /(?:^|[\s`"'$>])(?:python[\d.]{0,4}\s|\.\/webui\.sh|webui(?:-user)?\.(?:sh|bat)|launch\.py|(?:set |export )?COMMANDLINE_ARGS)|^\s{0,12}"--[\w-]{1,40}"/;
const MAX_SCANNED_LINES = 20_000;

/** The log's invocation lines joined, or undefined when it has none (then the whole log is read). */
function invocationLines(log: LogText): string | undefined {
  const found: string[] = [];
  for (let i = 0; i < log.lineCount && i < MAX_SCANNED_LINES; i++) {
    const line = log.line(i);
    if (line.length <= 2000 && INVOCATION.test(line)) found.push(line);
  }
  return found.length ? found.join('\n') : undefined;
}

/**
 * The tool's knobs for this log: an escalation whose `present` pattern matches (the log already turned
 * the usual knob) puts its knobs first; otherwise the tool's own list. Where the paste has a command line,
 * only that line counts ("--medvram is not like the old --lowvram" in prose turns nothing).
 */
export function knobsFor(log: LogText, compiled: CompiledTools | undefined, tool: ToolInfo, commandLine?: string): string[] | undefined {
  const i = compiled?.tools.indexOf(tool) ?? -1;
  const res = i >= 0 ? compiled!.escalations[i] : undefined;
  if (res && tool.escalate) {
    const where = commandLine ?? invocationLines(log);
    for (let j = 0; j < res.length; j++) {
      if (res[j].test(where ?? log.buf)) return [...tool.escalate[j].knobs, ...(tool.knobs ?? []).filter((k) => !tool.escalate![j].knobs.includes(k))];
    }
  }
  return tool.knobs;
}
