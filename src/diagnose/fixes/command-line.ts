// Rewrites the training command line from the paste with a fix's changes, so people can copy it. With
// the command parsed against knowledge/tools.yaml (tool-cli.ts), only the script's part is rewritten, a
// setting is written under the flags its parser defines, a flag is added only where that parser defines
// it, and a resumed run that reads its saved options gets no command for settings it ignores.
import type { ParsedCommand, SettingKey, ToolCli } from '../tool-cli.js';
import { flagOf, resolvedFlag } from '../tool-cli.js';

type Changes = Record<string, number | string | boolean>;

// Each setting's flag names when the script's parser is not known, a name before any name it starts with.
const FLAG_NAMES: Record<string, string[]> = {
  batch: ['per_device_train_batch_size', 'train_batch_size', 'samples_per_gpu', 'batch-size', 'batch_size', 'batch'],
  workers: ['workers_per_gpu', 'num_workers', 'num-workers', 'workers'],
  imgsz: ['img-size', 'img_size', 'imgsz', 'img'],
  accumulate: ['gradient_accumulation_steps', 'accumulate'],
  cache: ['cache'],
};

const escapeFlag = (flag: string) => flag.replace(/\./g, '\\.');
// `--name value`, `--name=value` (quoted or not) or a bare `--name`. A negative number is a value
// (`--batch-size -1` is YOLOv5's AutoBatch); the next flag is not.
const dashedFlag = (flag: string) => new RegExp(`(^|\\s)${escapeFlag(flag)}(?:([= ])(?!-[^\\d])(\\S{1,200})|(?=\\s|$))`, 'g');
// `name=value` (yolo CLI), also under a dotted path: Hydra overrides (`data.batch_size=32`,
// `++trainer.accumulate_grad_batches=2`) and mmcv/mmengine `--cfg-options train_dataloader.batch_size=2`.
// The path is kept as written. Bounded, so linear on any command line.
const keyedArg = (name: string) => new RegExp(`(^|\\s)((?:\\+{1,2})?(?:[A-Za-z_][\\w-]{0,40}\\.){0,5})${name}=(\\S{0,200})`, 'g');
// yacs-style opts after the config (detectron2: `SOLVER.IMS_PER_BATCH 16`).
const spacedArg = (name: string) => new RegExp(`(^|\\s)${escapeFlag(name)} (\\S{1,200})`, 'g');

// Settings given as yacs opts, by their full upper-case key.
const SPACED_NAMES: Record<string, string[]> = {
  batch: ['SOLVER.IMS_PER_BATCH'],
  workers: ['DATALOADER.NUM_WORKERS'],
};

/** How the tool takes a setting that the command line does not name yet, e.g. {batch: '--batch-size '}. */
export type AppendSyntax = Partial<Record<string, string>>;

const unquote = (v: string) => v.replace(/^(["'])(.*)\1$/, '$2');

/** Whether the value already written (undefined: a bare flag) is the value the fix asks for. */
function sameValue(written: string | undefined, value: number | string | boolean): boolean {
  if (typeof value === 'boolean') return written === undefined ? value : unquote(written).toLowerCase() === String(value);
  return written !== undefined && unquote(written) === String(value);
}

/** The value as the user wrote theirs: quoted when theirs was. */
function styled(written: string | undefined, value: number | string): string {
  const q = written === undefined ? '' : (/^["']/.exec(written)?.[0] ?? '');
  return `${q}${value}${q}`;
}

/**
 * The dashed flags that set `key`: the parser's own when known, with every abbreviation of them the command
 * uses (argparse reads `--batch 64` as --batch-size, and the last one given wins: both are rewritten), else
 * the usual spellings.
 */
function dashedNames(key: string, cli: ToolCli | undefined, words: string[]): string[] {
  if (!cli) return (FLAG_NAMES[key] ?? []).map((n) => `--${n}`);
  if (cli.keyed) return [];
  const own = (cli.settings?.[key as SettingKey] ?? []).filter((f) => f.startsWith('-'));
  const abbreviations = words.map((w) => flagOf(w)).filter((f): f is string => f !== undefined && !own.includes(f) && own.includes(resolvedFlag(cli, f) ?? ''));
  return [...own, ...new Set(abbreviations)];
}

function keyedNames(key: string, cli: ToolCli | undefined): string[] {
  if (cli?.keyed) return cli.settings?.[key as SettingKey] ?? [];
  return FLAG_NAMES[key] ?? [];
}

/** A resumed run whose tool reloads its saved options: the settings it still takes from the command. */
function resumeKeeps(cli: ToolCli | undefined, words: string[]): SettingKey[] | undefined {
  if (!cli?.resume_keeps) return undefined;
  const names = cli.settings?.resume ?? [];
  const resumed = words.some((w) => {
    if (cli.keyed) return w === 'resume' || (/^resume=/.test(w) && !/^resume=(?:false|none|0)$/i.test(w));
    const f = flagOf(w);
    return f !== undefined && names.includes(f);
  });
  return resumed ? cli.resume_keeps : undefined;
}

/**
 * The command line with the changes applied, or undefined when none of them changes it (a setting
 * it does not name, or names with that value already): an unchanged command is no correction.
 * `parsed` (tool-cli.ts parseCommand) confines the rewrite to the script's flags and its parser.
 */
export function rewriteCommandLine(commandLine: string, changes: Changes, append: AppendSyntax = {}, parsed?: ParsedCommand): string | undefined {
  const cli = parsed?.cli?.cli;
  const head = parsed ? parsed.words.slice(0, parsed.scriptAt).join(' ') : '';
  let out = parsed ? parsed.words.slice(parsed.scriptAt).join(' ') : commandLine;
  const keeps = parsed ? resumeKeeps(cli, parsed.words) : undefined;
  let changed = false;
  const written = new Set<string>();
  for (const [key, value] of Object.entries(changes)) {
    if (keeps && !keeps.includes(key as SettingKey)) continue;
    // Accumulation keeps the effective batch of a batch that was rewritten; alone it would change it.
    if (key === 'accumulate' && 'batch' in changes && !written.has('batch')) continue;
    let found = false;
    const rewrite = (re: RegExp, text: (m: string[]) => string) => {
      out = out.replace(re, (...m: string[]) => {
        found = true;
        const next = text(m);
        if (next !== m[0]) changed = true;
        return next;
      });
    };
    for (const flag of dashedNames(key, cli, parsed ? parsed.words.slice(parsed.scriptAt + 1) : [])) {
      rewrite(dashedFlag(flag), (m) => {
        const [all, lead, sep, was] = m;
        if (sameValue(was, value)) return all;
        if (value === false) return lead;
        if (value === true) return `${lead}${flag}`;
        return `${lead}${flag}${sep === '=' ? '=' : ' '}${styled(was, value)}`;
      });
      // A longer spelling found first (--batch-size) is the setting; a shorter one (--batch) may be another.
      if (found && !cli) break;
    }
    if (!found) {
      for (const name of keyedNames(key, cli)) {
        rewrite(keyedArg(name), (m) => {
          const [all, lead, path, was] = m;
          if (sameValue(was, value)) return all;
          return `${lead}${path}${name}=${value === false ? 'False' : value === true ? 'True' : styled(was, value)}`;
        });
        if (found) break;
      }
    }
    for (const name of found ? [] : (SPACED_NAMES[key] ?? [])) {
      rewrite(spacedArg(name), (m) => (sameValue(m[2], value) ? m[0] : `${m[1]}${name} ${value}`));
      if (found) break;
    }
    if (found) {
      written.add(key);
      continue;
    }
    if (typeof value !== 'number') continue;
    // A setting the command leaves at the tool's default: added only under a flag the script's parser defines.
    const syntax = appendSyntax(key, append, cli, parsed !== undefined);
    if (!syntax) continue;
    // One --cfg-options takes every key: a second one would be a separate (and later-winning) flag.
    if (syntax.startsWith('--cfg-options ') && /\s--cfg-options\s/.test(out)) out = out.replace(/(\s--cfg-options)(?=\s)/, `$1 ${syntax.slice(14)}${value}`);
    else out += ` ${syntax}${value}`;
    changed = true;
    written.add(key);
  }
  if (!changed) return undefined;
  return `${head} ${out}`.replace(/\s{2,}/g, ' ').trim();
}

/**
 * How to add a setting the command does not name: the tool's batch syntax (tools.yaml batch_arg) when the
 * script's parser defines its flag, else the parser's first flag for the setting; nothing for an unknown parser.
 */
function appendSyntax(key: string, append: AppendSyntax, cli: ToolCli | undefined, parsed: boolean): string | undefined {
  const given = append[key];
  if (!parsed) return given;
  if (!cli) return undefined;
  if (given) {
    const lead = cli.keyed ? /^([a-z]\w{0,40})=/.exec(given)?.[1] : flagOf(given.trim().split(/\s/)[0]);
    if (lead && cli.flags.includes(lead)) return given;
  }
  const flag = cli.settings?.[key as SettingKey]?.[0];
  if (!flag) return undefined;
  return cli.keyed ? `${flag}=` : `${flag} `;
}
