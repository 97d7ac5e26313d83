// A regression the report tells (issue 23, "what the user says"; the framework_version lever): the same workload on the
// same card worked on one version of a library, tool or build and fails on another. Nothing else changed, so the change
// between the versions is the cause, and the first fix is the version: go back to the one that worked (and try the
// newest release, which may carry the fix), never a smaller batch or model. The versions quoted are the paste's own,
// never a release the bot names from memory; where the report names no version ("after upgrading transformers"), the
// reply gives the comparison that decides (the version before the upgrade against this one).
// Read per clause, from fixed forms: a version as libraries and tools print it ("torch==2.10.0+cu130", "transformers
// 4.51.3", "v0.8.4", llama.cpp's build "b1696") beside the words of working or failing, an issue template's labelled
// pair ("working version: X", "bad version: Y"), "regression between X and Y", "after upgrading to X", and the Chinese
// "升级到 X 后", "X 版本正常". A dotted number alone (a memory fraction 0.9, a learning rate) is no version: it needs a
// package name, "==", a "v", or the word version/release/build beside it. Bounded and per line, so linear.
import { boundedLines } from '../lines.js';
import { t, type Locale } from '../../core/i18n.js';
import type { ComputedFix } from '../fixes/index.js';
import type { Incident } from '../incident/index.js';

const MAX_LINES = 400;
const MAX_LINE = 600;
const QUOTE = 60;

// Libraries, tools and runtimes whose version decides a memory failure (their own names, as pip and banners print them).
const PACKAGE =
  '(?:torch|pytorch|transformers|vllm|ollama|tensorflow|tf-nightly|tf|jax|jaxlib|diffusers|accelerate|deepspeed|peft|trl|bitsandbytes|xformers|flash[-_]attn|triton|llama[.-]cpp|llama-cpp-python|mlx|mlx-lm|cuda|cudnn|nccl|driver|lightning|pytorch-lightning|ultralytics|comfyui|paddlepaddle|paddle|mmcv|mmdet|onnxruntime|sglang|keras|numpy|sentence-transformers|whisper|faster-whisper|ctranslate2|candle|rocm|exllamav2|auto-gptq|optimum|timm|detectron2|spconv)';
// A version as printed: "2.10.0+cu130", "4.53.0", "0.11.0rc2", "0.1.47", "v0.8.4", "2.1.0.dev20230801".
const NUMBER = String.raw`v?\d{1,4}\.\d{1,4}(?:\.\d{1,6}){0,2}(?:[.-]?(?:rc|post|dev|a|b)\d{0,8})?(?:\+[\w.]{1,20})?`;
// Named by a package ("torch==2.10.0", "transformers 4.51.3", "vllm: 0.20.1"), by "==" or "v", by the word version /
// release / build ("version 0.1.47", "版本 0.11.0"), a llama.cpp build number ("b1696"), or written bare with three parts
// ("works fine with 14.12.2019", "2.11.0 also got out of memory"; not a figure with a unit).
const VERSION = new RegExp(
  String.raw`(?:(?<!build\s{1,3})\b${PACKAGE}\s{0,2}(?:==|=|:|\s)?\s{0,2}[\x60'"]?(${NUMBER})|==\s{0,2}(${NUMBER})|\b(v\d{1,4}\.\d{1,4}(?:\.\d{1,6}){0,2})\b|\b(?:version|release|build|版本)[\s:：=\x60'"]{1,6}(?:of\s{1,3}${PACKAGE}\s{1,3}(?:of\s{1,3})?)?[\x60'"]?(${NUMBER})|\b(b\d{3,5})\b|(?<![\w.])(${NUMBER})\s{0,2}(?:版本|version\b)|(?<![\w.$])(\d{1,4}\.\d{1,4}\.\d{1,6}(?:[.-]?(?:rc|post|dev)\d{0,8})?(?:\+\w[\w.]{0,19})?)(?!\w|\.\d|\s{0,2}(?:[KMGT]i?B|GB|MB|%|ms|s)\b))`,
  'gi',
);
// In a clause that names a regression's two ends ("between torch 2.10.0 and 2.11.0") a bare three-part number is a version too.
const BARE = new RegExp(String.raw`(?<![\w.])(\d{1,4}\.\d{1,4}\.\d{1,6}(?:[.-]?(?:rc|post|dev)\d{0,8})?(?:\+\w[\w.]{0,19})?)(?!\w|\.\d)`, 'g');
// The package written right before a version ("torch==", "transformers ", "vllm: ", "Ollama version "), not one further back.
const PACKAGE_BEFORE = new RegExp(String.raw`(?<!build\s{1,3})\b(${PACKAGE})\s{0,2}(?:version\s{0,2})?(?:==|=|:|\s)?\s{0,2}(?:of\s{1,3})?[\x60'"]?v?$`, 'i');
// The version upgraded to, also written bare ("this started after upgrading to 0.4.1", "updated Ollama to 0.1.13").
const UPGRADED_TO = new RegExp(
  String.raw`\b(?:upgrad|updat)\w{0,4}\s{1,3}(?:${PACKAGE}\s{1,3})?(?:\(\s{0,2})?to\s{1,3}(?:(?:version|release)\s{1,3})?(${PACKAGE}\s{0,2})?(${NUMBER})`,
  'i',
);

// A clause that says a version works: "works fine", "is working perfectly", "everything works", "no problem", "正常".
const WORKS =
  /\b(?:works?|worked|working|(?:train(?:s|ed)?|runs?|ran)\s{1,3}(?:fine|well|ok(?:ay)?)|continues|succeed(?:s|ed)|(?:can|could) run|successfully|(?:is|was|are|were) fine|no (?:problems?|issues?|errors?|oom)|good version|known[- ]good|last good)\b|正常|没(?:有)?问题|可以(?:跑|运行|用)?|都行/i;
// ... unless it says it does not: "never works", "doesn't work", "not working", "no longer works", "不能", "无法".
const NOT_WORKS =
  /\b(?:not|n't|never|no longer|stopped|fails? to)\s{1,3}(?:\w{1,12}\s{1,3})?(?:works?|worked|working|run)|\b(?:can't|cannot|can not|couldn't|could not)\b|不(?:能|行)|无法|不正常/i;
// A clause that says a version fails: the failure's words, a labelled bad version, or what changed since it.
const FAILS =
  /\b(?:out of memory|OOM|not enough (?:GPU |video |graphics )?memory|insufficient|fail(?:s|ed|ing)?|crash(?:es|ed)?|error|broken|bad|buggy|regress\w{0,4}|leak\w{0,3}|never works|not working|doesn't work|does not work)\b|报错|显存(?:不足|溢出|爆)|失败|崩溃/i;
// The bad one named by what came after it: "after b1697", "since 2.11.0", "after upgrading to vllm 0.6.0", "升级到 X 后",
// "upgraded from 4.51.3 to 4.53.0" (the version upgraded to).
const AFTER_VERSION =
  /\b(?:upgrad|updat)\w{0,4}\s{1,3}(?:from\s{1,3}[^\s]{1,40}\s{1,3})?to\s{1,3}$|\b(?:after|since)\s{1,3}(?:(?:upgrad|updat|mov|switch)\w{0,4}\s{1,3}(?:to\s{1,3})?)?(?:the\s{1,3})?(?:(?!from\b)[\w.-]{1,30}\s{0,2})?$|(?:升级|更新)(?:到|至)?\s{0,3}$/i;
// "regression between torch 2.10.0 and 2.11.0", "regression from X to Y": the first worked, the second fails.
const REGRESSION_PAIR = /\bregress\w{0,4}\s{1,3}(?:between|from)\b/i;

// The report says it started with an upgrade, naming no version: "after upgrading transformers", "since the last
// update", "worked with the previous version", "升级后", "之前的版本正常".
const UPGRADE_TOLD = new RegExp(
  String.raw`\b(?:after|before|since)\s{1,3}(?:the\s{1,3}|an?\s{1,3}|this\s{1,3}|my\s{1,3})?(?:latest\s{1,3}|recent\s{1,3}|last\s{1,3})?(?:upgrade|update|git\s{1,3}pull)\b|\b(?:after|since)\s{1,3}(?:I\s{1,3}|we\s{1,3})?(?:upgrad|updat)\w{0,4}\s{1,3}(?:to\s{1,3})?(?:(?:the\s{1,3})?(?:latest|newest|new)\s{1,3})?(?:${PACKAGE}|version|release)\b|\bsince\s{1,3}the\s{1,3}(?:last\s{1,3}|latest\s{1,3}|recent\s{1,3})?(?:upgrade|update)\b|\b(?:worked|works|was working|ran)\s{1,3}(?:fine\s{1,3}|well\s{1,3})?(?:with|on|in)\s{1,3}(?:the\s{1,3})?(?:previous|older|old|last|earlier)\s{1,3}(?:version|release|build)\b|(?:升级|更新|升級)(?:了)?[^\n。]{0,20}(?:之?[后後]|以[后後])|(?:之前|以前|旧|老)(?:的)?版本[^\n。]{0,10}(?:正常|没(?:有)?问题|可以)`,
  'i',
);

// A move from one version to another ("upgrade diffusers from 0.16 to 0.17", "after upgrading from v0.11.2 to v0.14.1",
// "upgraded from vllm0.7.3 to vllm0.8.2", "从 2.5.10 升级到 2.5.15", "3.0.6 升级到 3.0.9"): the first ran, the second is the
// one that fails, but the report does not say the first ran the same settings.
const TRANSITION = new RegExp(
  String.raw`\b(?:upgrad|updat|mov|switch)\w{0,4}\s{1,3}(${PACKAGE}\s{1,3})?from\s{1,3}(${PACKAGE}\s{0,2})?(${NUMBER})\s{1,3}to\s{1,3}(?:${PACKAGE}\s{0,2})?(${NUMBER})|(?:从\s{0,3})?(${PACKAGE}\s{0,2})?(${NUMBER})\s{0,3}(?:版本)?\s{0,3}(?:升级|更新)(?:到|至)\s{0,3}(?:${PACKAGE}\s{0,2})?(${NUMBER})`,
  'i',
);
// The version installed before, said without a verdict ("之前安装的是 2.5.10 版本", "previously on 0.6.3").
const PREVIOUS_BEFORE = /(?:之前|以前|原来|previously|before)\s{0,3}(?:安装|用|使用|installed|used|was on|had|on)?\s{0,3}(?:的是|的|了)?\s{0,3}$/i;
// Nothing else changed, told: "the same command / settings / data and parameters / workflow", "identical configuration",
// "without any change", "under the same conditions", "同样的工作流", or a verdict on the old version beside the upgrade
// ("the old version does not", "舊版不會", "之前的版本正常"). "It used to work" alone is no such statement (the
// workflow may have changed too), so without one a move between versions is only one of the changes, and the comparison
// comes after the diagnosis's own first fix.
const SAME_TOLD =
  /\bidentical\s{1,3}(?:[\w-]{1,15}\s{1,3}){0,2}?(?:commands?|settings?|config(?:uration)?s?|parameters?|setup|code|scripts?)\b|\b(?:the\s{1,3})?same\s{1,3}(?:[\w-]{1,15}\s{1,3}){0,3}?(?:commands?|settings?|config(?:uration)?s?|parameters?|params|scripts?|code|workflows?|data(?:set)?|hardware|conditions?|machine|setup|inputs?|prompts?|model)\b|\bwithout\s{1,3}any\s{1,3}(?:other\s{1,3})?changes?\b|\bnothing\s{1,3}(?:else\s{1,3})?(?:has\s{1,3})?changed\b|同样的|相同的|一样的|同樣的|相同|没有(?:任何)?(?:改动|修改|变化)|\b(?:old|older|previous|earlier)\s{1,3}(?:version|release|build)s?\s{1,3}(?:(?:does|did)\s{0,1}n[o']t|works?|worked|(?:is|was)\s{1,3}fine|had\s{1,3}no\s{1,3}(?:problem|issue))|(?:舊版|旧版|老版|(?:之前|以前)的?版本)[^\n。]{0,6}(?:不會|不会|正常|沒問題|没问题|可以|都行)/i;

// A version gone back to as the way out ("reverting back to 0.1.29 fixed", "downgrading to 2.1.0 solved it", "rolled back
// to v0.5.3 and it works", "回退到 0.1.29 就正常了"): the report's own experiment says that version runs.
const REVERTED_TO =
  /\b(?:revert(?:s|ed|ing)?|downgrad(?:e|es|ed|ing)|roll(?:s|ed|ing)?\s{1,3}back|go(?:es|ing)?\s{1,3}back|went\s{1,3}back)\s{1,3}(?:back\s{1,3})?(?:to|on)\s{1,3}(?:the\s{1,3})?(?:[\w.-]{1,30}\s{1,3})?(?:version\s{1,3})?[\x60'"]?v?$|(?:回退|降级|退回|回滚)(?:到|至)\s{0,3}$/i;
const REVERT_HELPED = /^[^\n]{0,40}?(?:\b(?:fix(?:es|ed)?|solv(?:es|ed)|resolv(?:es|ed)|works?|worked|helped|ok(?:ay)?|fine)\b|解决|正常|好了|可以)/i;
const REVERT_DID_NOT = /\b(?:not|n't|never|still)\b|没有?|仍|还是/i;

// An upgrade tried as a fix that did not help ("after upgrading to the latest version it still OOMs") tells no regression.
const STILL = /\bstill\b|\bsame (?:error|problem|issue)\b|仍然|依然|还是/i;

export interface ToldRegression {
  /** The version said to work, as written with its package ("torch==2.10.0+cu130", "b1696"). */
  good?: string;
  /** The version said to fail. */
  bad?: string;
  /** The report's line that tells it, quoted. */
  line: string;
  /** The report says nothing else changed (a pair of verdicts, "the same settings", "worked before"): the version comes first. */
  first: boolean;
}

const quote = (s: string) => {
  const t = s.trim();
  return t.length > QUOTE ? t.slice(0, QUOTE) + '…' : t;
};

/** What the words next to a version say of it: it fails (or came after the failure began), it works, or nothing. */
function polarityOf(words: string, before: boolean): 'good' | 'bad' | undefined {
  if (before && AFTER_VERSION.test(words)) return 'bad';
  if (NOT_WORKS.test(words)) return 'bad';
  const works = WORKS.test(words);
  if (FAILS.test(words) && !works) return 'bad';
  return works ? 'good' : undefined;
}

/** The versions a clause names, each with the package written just before it where there is one. */
function versionsIn(clause: string, bare = false): { at: number; end: number; text: string; number: string }[] {
  const out: { at: number; end: number; text: string; number: string }[] = [];
  const pattern = bare ? BARE : VERSION;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(clause); m; m = pattern.exec(clause)) {
    const number = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? m[6] ?? m[7]).replace(/^v(?=\d)/, '');
    const start = m.index + m[0].indexOf(m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? m[6] ?? m[7]);
    const pkg = PACKAGE_BEFORE.exec(clause.slice(Math.max(0, start - 40), start));
    out.push({ at: m.index, end: m.index + m[0].length, number, text: pkg ? `${pkg[1]} ${number}` : number });
  }
  return out;
}

// Clauses: sentences, and the halves of a contrast ("works with X but fails with Y", "X 正常，Y 报错").
const CLAUSE_SPLIT = /(?<=[.!?])\s{1,4}|[;。；！？]|,?\s{1,3}(?:but|while|whereas|however)\s{1,3}|,(?:but|while|whereas|however)\s{1,3}|，\s{0,2}(?:但|而)?/i;

/** One release written at two precisions ("12.3" and "12.3.107", "0.16" and "0.16.0"): not two versions. */
function sameRelease(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const [x, y] = [a.replace(/^.*\s/, '').split(/[.+-]/), b.replace(/^.*\s/, '').split(/[.+-]/)];
  return x.slice(0, Math.min(x.length, y.length)).every((p, i) => p.toLowerCase() === y[i].toLowerCase());
}

/** Release order of two version numbers ("4.28.1" < "4.31.dev0" < "4.31.0"): by their numeric parts, a suffix last. */
function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.split(/[.+-]/).map((p) => (/^\d+$/.test(p) ? Number(p) : -1));
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The regression the report tells: a version that worked and another that fails, or an upgrade since which it fails. */
export function readToldRegression(text: string): ToldRegression | undefined {
  let good: string | undefined;
  let bad: string | undefined;
  let goodLine = '';
  let badLine = '';
  let movedFrom: string | undefined;
  let movedTo: string | undefined;
  let movedLine = '';
  let upgradeLine: string | undefined;
  let same = false;
  let sameLine = '';
  // Every version a package is named with ("transformers==4.28.1" ... "transformers==4.31.dev0"), by package.
  const byPackage = new Map<string, string[]>();
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (!upgradeLine && UPGRADE_TOLD.test(line) && !STILL.test(line)) upgradeLine = line;
    if (!same && SAME_TOLD.test(line)) [same, sameLine] = [true, line];
    if (!/\d/.test(line)) continue;
    const moved = TRANSITION.exec(line);
    if (moved && !movedLine) {
      const pkg = (moved[1] ?? moved[2] ?? moved[5])?.trim();
      const from = (moved[3] ?? moved[6]).replace(/^v(?=\d)/, '');
      const to = (moved[4] ?? moved[7]).replace(/^v(?=\d)/, '');
      if (!sameRelease(from, to)) [movedFrom, movedTo, movedLine] = [pkg ? `${pkg} ${from}` : from, pkg ? `${pkg} ${to}` : to, line];
    }
    const upgradedTo = STILL.test(line) ? null : UPGRADED_TO.exec(line);
    if (upgradedTo && !bad) [bad, badLine] = [`${upgradedTo[1] ? upgradedTo[1].trim() + ' ' : ''}${upgradedTo[2].replace(/^v(?=\d)/, '')}`, line];
    // The move's two versions are read above; the words around them ("OOM after upgrading from X") judge neither.
    const rest = moved ? line.slice(0, moved.index) + ' '.repeat(moved[0].length) + line.slice(moved.index + moved[0].length) : line;
    for (const clause of rest.split(CLAUSE_SPLIT)) {
      const versions = versionsIn(clause);
      const pair = REGRESSION_PAIR.test(clause) ? versionsIn(clause, true) : [];
      if (pair.length >= 2 && !sameRelease(pair[0].number, pair[1].number)) {
        good ??= pair[0].text;
        bad ??= pair[1].text;
        goodLine ||= line;
        badLine ||= line;
        continue;
      }
      for (const v of versions) {
        const pkg = /^(\S+) /.exec(v.text)?.[1].toLowerCase();
        if (pkg && !byPackage.get(pkg)?.includes(v.number)) byPackage.set(pkg, [...(byPackage.get(pkg) ?? []), v.number]);
      }
      versions.forEach((v, i) => {
        // The words between the previous version and this one speak of it ("works with X and fails with Y"); where they
        // say nothing, the words after it up to the next one ("In b1696, everything works fine").
        const before = clause.slice(i > 0 ? versions[i - 1].end : 0, v.at);
        const after = clause.slice(v.end, i + 1 < versions.length ? versions[i + 1].at : clause.length);
        const reverted = REVERTED_TO.test(before) && REVERT_HELPED.test(after) && !REVERT_DID_NOT.test(after.slice(0, 40));
        const polarity = reverted ? 'good' : (polarityOf(before, true) ?? polarityOf(after, false));
        if (polarity === 'bad') {
          if (bad === undefined) [bad, badLine] = [v.text, line];
          // A version first read as failing ("OOM of a model trained on 0.22.0 with 0.23.0") and later said to work: the
          // failing one is the next version said to fail.
          else if (good !== undefined && sameRelease(bad, good)) [bad, badLine] = [v.text, line];
        } else if (polarity === 'good') {
          if (good === undefined) [good, goodLine] = [v.text, line];
          if (bad !== undefined && sameRelease(bad, good)) [bad, badLine] = [undefined, ''];
        } else if (PREVIOUS_BEFORE.test(before) && !movedLine) {
          [movedFrom, movedLine] = [v.text, line];
        }
      });
    }
  }
  // A version said to work and another said to fail: the pair itself says nothing else changed.
  if (good && bad && !sameRelease(good, bad)) return { good, bad, line: quote(badLine || goodLine), first: true };
  // A move between versions (or the version used before): first where the report says nothing else changed.
  const from = good ?? movedFrom;
  const to = bad ?? movedTo;
  if (from && (to || same || upgradeLine) && !sameRelease(from, to))
    return { good: from, bad: to, line: quote(movedLine || goodLine || badLine), first: same || (good !== undefined && to !== undefined) };
  if (bad && upgradeLine) return { bad, line: quote(upgradeLine), first: true };
  // One package named at two versions in a report that says nothing else changed: releases move forward, so the older
  // one is what ran and the newer one fails ("a month ago ... transformers==4.28.1 ... now transformers==4.31.dev0").
  if (same && !good) {
    for (const [pkg, numbers] of byPackage) {
      // Two releases of one major line (4.28.1 and 4.31.dev0); numbers of different majors are more likely two things.
      if (numbers.length !== 2 || numbers[0].split('.')[0] !== numbers[1].split('.')[0]) continue;
      const [older, newer] = [...numbers].sort(compareVersions);
      if (!sameRelease(older, newer) && (bad === undefined || sameRelease(bad, newer)))
        return { good: `${pkg} ${older}`, bad: `${pkg} ${newer}`, line: quote(badLine || sameLine), first: true };
    }
  }
  if (upgradeLine) return { line: quote(upgradeLine), first: same };
  return undefined;
}

/**
 * A memory diagnosis's fixes with the told regression's: first where the report names the version that fails (with the
 * one that worked, or the upgrade since which it fails), second (after the diagnosis's own first fix) where it tells an
 * upgrade without a version, which is a comparison to make rather than the lever itself.
 */
export function withToldRegression(fixes: ComputedFix[], regression: ToldRegression | undefined, incident: Incident, loc: Locale | undefined): ComputedFix[] {
  if (!regression) return fixes;
  // A lever that is itself what the versions changed keeps its place: PyTorch 0.4 removed volatile (levers/volatile.ts),
  // so code from 0.3 needs no_grad on 0.4, not the old release back.
  const explained = incident.eval.volatileRemoved !== undefined;
  const { good, bad, line, first } = regression;
  const words = { good: good ?? '', bad: bad ?? '', line: `"${line}"` };
  // Literal keys, so the catalogue check finds each one the code asks for.
  const key =
    good && bad ? 'fix.versionRegression.pair' : bad ? 'fix.versionRegression.since' : good ? 'fix.versionRegression.good' : 'fix.versionRegression.told';
  const fix: ComputedFix = { kind: 'advice', summary: t(loc, key, words), changes: {} };
  return first && !explained ? [fix, ...fixes] : [...fixes.slice(0, 1), fix, ...fixes.slice(1)];
}
