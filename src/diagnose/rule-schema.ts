// The shape of knowledge/<id>/rule.yaml, validated with zod when rules load.
import { z } from 'zod';

import { CATEGORIES, CONDITIONS, FIX_KINDS, type Rule } from './rule-types.js';

export { CATEGORIES, CONDITIONS, FIX_KINDS };
/** The {fact} placeholders of a text, sorted: a translation fills the same ones. */
export const placeholdersOf = (text: string): string[] => [...text.matchAll(/\{(\w{1,40})\}/g)].map((m) => m[1]).sort();
const samePlaceholders = (a: string, b: string) => placeholdersOf(a).join() === placeholdersOf(b).join();

const pattern = z
  .string()
  .min(3)
  .max(500)
  .refine((p) => !/^\.\*|\.\*$/.test(p), 'a pattern must not start or end with .* (it is searched, not anchored)');

const adviceId = z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'lower-case words joined by -');
/** knowledge/advice.yaml: advice texts shared by several rules' fixes (`kind: advice, shared: <id>`). */
export const sharedAdviceSchema = z.array(
  z
    .object({
      id: adviceId,
      text: z.string().min(1),
      zh: z.object({ text: z.string().min(1) }).strict(),
    })
    .strict()
    .refine((a) => samePlaceholders(a.text, a.zh.text), { message: 'zh.text must translate text, with the same {placeholders}', path: ['zh', 'text'] }),
);

export const fixSchema = z
  .object({
    kind: z.enum(FIX_KINDS),
    /** Sentence for people; {fact} placeholders are filled from the facts. `advice` needs it or `shared`. */
    text: z.string().min(1).optional(),
    /** The id of a text in knowledge/advice.yaml, for advice that answers failures of more than one rule (one text, one place). */
    shared: adviceId.optional(),
    /** Only offer this fix when these conditions hold. */
    when: z.array(z.enum(CONDITIONS)).optional(),
    /** The text in Simplified Chinese, with the same {fact} placeholders (issue 14 §6). */
    zh: z
      .object({ text: z.string().min(1) })
      .strict()
      .optional(),
    /** Setting changes for `advice` fixes, e.g. {cache: false}. */
    changes: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).optional(),
  })
  .refine((f) => f.kind !== 'advice' || (f.text !== undefined) !== (f.shared !== undefined), {
    message: 'an advice fix needs text or shared (an id in advice.yaml), not both',
    path: ['text'],
  })
  .refine((f) => f.shared === undefined || (f.kind === 'advice' && !f.zh), {
    message: 'shared advice brings its own zh; only kind advice takes it',
    path: ['shared'],
  })
  .refine((f) => !f.zh || (f.text !== undefined && samePlaceholders(f.text, f.zh.text)), {
    message: 'zh.text must translate text, with the same {placeholders}',
    path: ['zh', 'text'],
  });

const flagName = z.string().regex(/^(?:--?[A-Za-z][\w.-]{0,60}|[a-z][\w]{0,40})$/, 'a flag (--name, -n) or, for a keyed CLI, a key');
const SETTING_KEYS = ['batch', 'accumulate', 'eval_batch', 'workers', 'imgsz', 'cache', 'precision', 'resume'] as const;
const settingKey = z.enum(SETTING_KEYS);
/** The command-line interface of a tool: the flags it defines (from its own argparse or docs), for rewritten commands. */
const cliSchema = z
  .object({
    /** A launcher runs a script given after its own flags; a script reads the settings. */
    role: z.enum(['launcher', 'script']),
    /** The command's leading words that run it (re2, whole words): 'torchrun', 'accelerate launch', 'yolo'. */
    programs: z.array(pattern).optional(),
    /** Script paths that are this tool's whatever the log says (re2). */
    scripts: z.array(pattern).optional(),
    /** Script paths that are this tool's only when the log was written by this tool (a generic train.py). */
    tool_scripts: z.array(pattern).optional(),
    except_scripts: z.array(pattern).optional(),
    /** name=value arguments (yolo) instead of --flags. */
    keyed: z.boolean().optional(),
    /** `flags` is the whole parser: a flag outside it is not this tool's. */
    complete: z.boolean().optional(),
    /** Each flag is accepted spelled with - or _. */
    dash_underscore: z.boolean().optional(),
    flags: z.array(flagName).min(1),
    /** Flags that take no value (a launcher's script starts after its flags and their values). */
    switches: z.array(flagName).optional(),
    /** Per setting, the flags that set it, the one to add first. */
    settings: z
      .object(
        Object.fromEntries(SETTING_KEYS.map((k) => [k, z.array(flagName).min(1).optional()])) as Record<
          (typeof SETTING_KEYS)[number],
          z.ZodOptional<z.ZodArray<typeof flagName>>
        >,
      )
      .strict()
      .optional(),
    /** Present: a resumed run reads its saved options and takes only these settings from the command. */
    resume_keeps: z.array(settingKey).optional(),
    version: z.string().min(3).max(200),
  })
  .strict()
  .refine((c) => (c.role === 'launcher' ? (c.programs?.length ?? 0) > 0 : (c.programs ?? c.scripts ?? c.tool_scripts ?? []).length > 0), {
    message: 'a launcher needs programs, a script programs, scripts or tool_scripts',
  })
  .refine((c) => Object.values(c.settings ?? {}).every((names) => names.every((n) => c.flags.includes(n))), {
    message: 'every settings flag is one of flags',
    path: ['settings'],
  })
  .refine((c) => (c.switches ?? []).every((n) => c.flags.includes(n)), { message: 'every switch is one of flags', path: ['switches'] });

/** One tool of knowledge/tools.yaml. */
export const toolSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'lower-case words joined by -'),
    name: z.string().min(2).max(80),
    /** Empty only for a launcher or script no log line names: its `cli` is all it describes. */
    detect: z.array(pattern),
    cli: cliSchema.optional(),
    inference: z.boolean().optional(),
    batch_flag: z.string().min(2).max(200).optional(),
    batch_default: z.number().int().positive().optional(),
    /** How to add the batch to a command line that does not set it: the flag and separator, e.g. "--batch-size ", "batch=". */
    batch_arg: z
      .string()
      .min(2)
      .max(80)
      .regex(/^[\w.+-]+(?:[ =]|\s[\w.+-]+[ =])$/, 'a flag followed by a space or =')
      .optional(),
    amp: z.string().min(2).max(200).optional(),
    amp_default_on: z.boolean().optional(),
    /** How this tool splits weights that do not fit one device over several (the weights fix quotes it). */
    weights_split: z.string().min(2).max(200).optional(),
    knobs: z.array(z.string().min(2).max(200)).optional(),
    /**
     * Knobs for a log that already turned the first ones: when `present` (re2) matches the log, these come
     * first (a web UI already on --medvram is told --lowvram, not --medvram again).
     */
    escalate: z.array(z.object({ present: pattern, knobs: z.array(z.string().min(2).max(200)).min(1) }).strict()).optional(),
    /** The texts above in Simplified Chinese where they hold words, not only flags (issue 14 §6); knobs item by item. */
    zh: z
      .object({
        batch_flag: z.string().min(2).max(200).optional(),
        amp: z.string().min(2).max(200).optional(),
        weights_split: z.string().min(2).max(200).optional(),
        knobs: z.array(z.string().min(2).max(200)).optional(),
        escalate: z.array(z.array(z.string().min(2).max(200))).optional(),
      })
      .strict()
      .optional(),
    source: z.string().url(),
  })
  .strict()
  .refine((t) => t.detect.length > 0 || t.cli !== undefined, { message: 'a tool without detect patterns needs a cli', path: ['detect'] })
  .refine((t) => !t.zh?.knobs || t.zh.knobs.length === (t.knobs?.length ?? 0), { message: 'zh.knobs: one per knob, in order', path: ['zh', 'knobs'] })
  .refine(
    (t) => !t.zh?.escalate || (t.zh.escalate.length === (t.escalate?.length ?? 0) && t.zh.escalate.every((k, i) => k.length === t.escalate![i].knobs.length)),
    { message: 'zh.escalate: one list per escalation, one text per knob', path: ['zh', 'escalate'] },
  );
export const toolsSchema = z.array(toolSchema).min(1);

export const ruleSchema = z.object({
  id: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'lower-case words joined by -'),
  title: z.string().min(5).max(120),
  /** The rule's texts in Simplified Chinese (issue 14 §6); each fix's own is its zh.text. */
  zh: z
    .object({ title: z.string().min(2).max(120) })
    .strict()
    .optional(),
  category: z.enum(CATEGORIES),
  /** Higher wins when several rules match; the later match breaks ties. */
  priority: z.number().int().min(0).max(1000),
  description: z.string().optional(),
  /** re2 patterns, matched per line of the normalised log; any one of them makes the rule a candidate. */
  patterns: z.array(pattern).min(1),
  /** Patterns that must also appear somewhere in the log for the rule to apply. */
  requires: z.array(pattern).optional(),
  /** Patterns that veto the rule when present anywhere in the log (near-miss guards). */
  excludes: z.array(pattern).optional(),
  /** Fact conditions that must all hold. */
  when: z.array(z.enum(CONDITIONS)).optional(),
  /** Facts this rule's fixes use; documented so readers see what the rule reads from a log. */
  captures: z.array(z.string()).default([]),
  /**
   * A recognition rule: it recognises another rule's failure in another form (the reporter's words, a
   * framework's own message) and is answered by that rule's conditions and fixes, its own after them.
   */
  answers: z
    .string()
    .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/)
    .optional(),
  /** At least one, unless the rule answers another (rule-base.ts checks it). */
  fixes: z.array(fixSchema),
  source: z
    .object({
      seed: z.string().optional(),
      issue: z.string().url().optional(),
      note: z.string().optional(),
    })
    .refine((s) => s.seed || s.issue || s.note, 'name a seed document or a public issue'),
});
// The schema and the hand-written Rule type must agree.
export type RuleFromSchema = z.infer<typeof ruleSchema>;
const _agree: (r: RuleFromSchema) => Rule = (r) => r;
void _agree;
