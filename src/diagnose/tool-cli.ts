// A pasted command read against the command-line interfaces of knowledge/tools.yaml (`cli`): which
// launcher runs which script, and which tool's parser reads the script's flags. A rewritten command may
// only change or add flags that parser defines (issue 23 item 4): a flag it does not define stops the
// run with "unrecognized arguments", and a launcher's own flags are not the script's.
import RE2 from 're2';

export type SettingKey = 'batch' | 'accumulate' | 'eval_batch' | 'workers' | 'imgsz' | 'cache' | 'precision' | 'resume';

export interface ToolCli {
  role: 'launcher' | 'script';
  programs?: string[];
  scripts?: string[];
  tool_scripts?: string[];
  except_scripts?: string[];
  keyed?: boolean;
  complete?: boolean;
  dash_underscore?: boolean;
  flags: string[];
  switches?: string[];
  settings?: Partial<Record<SettingKey, string[]>>;
  resume_keeps?: SettingKey[];
  version: string;
}

/** A tool's CLI with its patterns compiled. */
export interface CompiledCli {
  tool: string;
  cli: ToolCli;
  programs: RE2[];
  scripts: RE2[];
  toolScripts: RE2[];
  except: RE2[];
}

/** Takes the tools' ids and CLIs only (tools.ts imports this file: no import back). */
export function compileClis(tools: { id: string; cli?: ToolCli }[]): CompiledCli[] {
  const re = (list: string[] | undefined, whole: boolean) => (list ?? []).map((p) => new RE2(whole ? `^(?:${p})$` : p));
  return tools
    .filter((t) => t.cli)
    .map((t) => ({
      tool: t.id,
      cli: t.cli!,
      programs: re(t.cli!.programs, true),
      scripts: re(t.cli!.scripts, false),
      toolScripts: re(t.cli!.tool_scripts, false),
      except: re(t.cli!.except_scripts, false),
    }));
}

/** A command split into its words, with the launcher's part and the script's part told apart. */
export interface ParsedCommand {
  words: string[];
  /** The launcher that runs the script (torchrun, deepspeed, accelerate launch), when there is one. */
  launcher?: CompiledCli;
  /** Index of the launcher's first own flag (its program words come before). */
  launcherArgsAt: number;
  /** Index of the script's word (or of the program's, for a tool run as a program: yolo). */
  scriptAt: number;
  script?: string;
  /** The parser that reads the script's flags; undefined when no tool's CLI is known for the script. */
  cli?: CompiledCli;
}

// A word: unquoted runs and quoted strings glued together (--prompt="a b"), bounded by the command's length.
const WORD = /(?:[^\s"']+|"[^"\n]{0,2000}"|'[^'\n]{0,2000}')+/g;
const ENV_ASSIGNMENT = /^[A-Za-z_]\w{0,60}=/;
const PYTHON = /^(?:\S{0,200}\/)?python[\d.]{0,5}$/;
/** Flags of the interpreter itself before -m or the script. */
const PYTHON_OPTION_WITH_VALUE = new Set(['-W', '-X', '-c']);

export function commandWords(command: string): string[] {
  return command.match(WORD) ?? [];
}

/** The flag a word names (`--batch-size=8` -> `--batch-size`), or undefined for a value (`-1`, `x.yaml`). */
export function flagOf(word: string, keyed = false): string | undefined {
  const dashed = /^(--?[A-Za-z][\w.-]{0,60})(?:=|$)/.exec(word);
  if (dashed) return dashed[1];
  if (keyed) {
    const key = /^([a-z]\w{0,40})=/.exec(word);
    if (key) return key[1];
  }
  return undefined;
}

const norm = (flag: string, cli: ToolCli) => (cli.dash_underscore ? flag.replace(/_/g, '-') : flag);

/** Whether the CLI defines the flag (a keyed CLI: the key). */
export function defines(c: ToolCli, flag: string): boolean {
  const f = norm(flag, c);
  return resolvedFlag(c, f) !== undefined;
}

/**
 * The flag of the CLI a word's flag stands for: itself when defined, else the one long option it is an
 * unambiguous prefix of (argparse's allow_abbrev: YOLOv5's `--batch 64` sets --batch-size); undefined otherwise.
 */
export function resolvedFlag(c: ToolCli, flag: string): string | undefined {
  const f = norm(flag, c);
  const exact = c.flags.find((g) => norm(g, c) === f);
  if (exact) return exact;
  if (c.keyed || !f.startsWith('--')) return undefined;
  const longer = c.flags.filter((g) => norm(g, c).startsWith(f));
  return longer.length === 1 ? longer[0] : undefined;
}

/** Find which launcher and which script a command runs, and the script's CLI (the log's tool decides a generic script name). */
export function parseCommand(command: string, clis: CompiledCli[], logTool?: string): ParsedCommand {
  const words = commandWords(command);
  let i = 0;
  while (i < words.length && ENV_ASSIGNMENT.test(words[i])) i++;
  const launchers = clis.filter((c) => c.cli.role === 'launcher');
  const programOf = (at: number, list: CompiledCli[]) => {
    for (const n of [3, 2, 1]) {
      const head = words.slice(at, at + n).join(' ');
      const hit = list.find((c) => c.programs.some((p) => p.test(head)));
      if (hit) return { cli: hit, next: at + n };
    }
    return undefined;
  };
  let launcher: CompiledCli | undefined;
  const asLauncher = programOf(i, launchers);
  if (asLauncher) {
    launcher = asLauncher.cli;
    i = asLauncher.next;
  }
  const launcherArgsAt = i;
  if (launcher) {
    const own = launcher.cli;
    // The launcher's flags and their values, up to the first word that is not one: the script.
    while (i < words.length && flagOf(words[i])) {
      const flag = flagOf(words[i])!;
      const takesValue = !words[i].includes('=') && !(own.switches ?? []).some((s) => norm(s, own) === norm(flag, own));
      i += takesValue ? 2 : 1;
    }
  }
  const scripts = clis.filter((c) => c.cli.role === 'script');
  const asProgram = programOf(i, scripts);
  if (asProgram) return { words, launcher, launcherArgsAt, scriptAt: i, script: words[i], cli: asProgram.cli };
  if (i < words.length && PYTHON.test(words[i])) {
    i++;
    while (i < words.length && words[i].startsWith('-') && words[i] !== '-m') i += PYTHON_OPTION_WITH_VALUE.has(words[i]) ? 2 : 1;
    if (words[i] === '-m') i++;
  }
  const script = words[i];
  if (script === undefined) return { words, launcher, launcherArgsAt, scriptAt: i };
  const named = scripts.find((c) => c.scripts.some((p) => p.test(script)) && !c.except.some((p) => p.test(script)));
  const byTool = named ?? scripts.find((c) => c.tool === logTool && c.toolScripts.some((p) => p.test(script)) && !c.except.some((p) => p.test(script)));
  return { words, launcher, launcherArgsAt, scriptAt: i, script, cli: byTool };
}

/** The flags a part of the command names, in order (values skipped). */
export function flagsIn(words: string[], keyed = false): string[] {
  return words.map((w) => flagOf(w, keyed)).filter((f): f is string => f !== undefined);
}

/**
 * What in a command its tools do not define: launcher flags outside a complete launcher parser, and
 * script flags outside a complete script parser. Empty when the command parses.
 */
export function undefinedFlags(p: ParsedCommand): string[] {
  const out: string[] = [];
  if (p.launcher?.cli.complete) {
    for (const f of flagsIn(p.words.slice(p.launcherArgsAt, p.scriptAt))) if (!defines(p.launcher.cli, f)) out.push(f);
  }
  if (p.cli?.cli.complete) {
    for (const f of flagsIn(p.words.slice(p.scriptAt + 1), p.cli.cli.keyed)) if (!defines(p.cli.cli, f)) out.push(f);
  }
  return out;
}
