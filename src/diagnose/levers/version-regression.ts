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

const MAX_LINES = 400;
const MAX_LINE = 600;
const QUOTE = 60;

// Libraries, tools and runtimes whose version decides a memory failure (their own names, as pip and banners print them).
const PACKAGE =
  '(?:torch|pytorch|transformers|vllm|ollama|tensorflow|tf-nightly|tf|jax|jaxlib|diffusers|accelerate|deepspeed|peft|trl|bitsandbytes|xformers|flash[-_]attn|triton|llama[.-]cpp|llama-cpp-python|mlx|mlx-lm|cuda|cudnn|nccl|driver|lightning|pytorch-lightning|ultralytics|comfyui|paddlepaddle|paddle|mmcv|mmdet|onnxruntime|sglang|keras|numpy|sentence-transformers|whisper|faster-whisper|ctranslate2|candle|rocm|exllamav2|auto-gptq|optimum|timm|detectron2|spconv)';
// A version as printed: "2.10.0+cu130", "4.53.0", "0.11.0rc2", "0.1.47", "v0.8.4", "2.1.0.dev20230801".
const NUMBER = String.raw`v?\d{1,4}\.\d{1,4}(?:\.\d{1,6}){0,2}(?:[.-]?(?:rc|post|dev|a|b)\d{0,8})?(?:\+[\w.]{1,20})?`;
// Named by a package ("torch==2.10.0", "transformers 4.51.3", "vllm: 0.20.1"), by "==" or "v", by the word version /
// release / build ("version 0.1.47", "版本 0.11.0"), or a llama.cpp build number ("b1696").
const VERSION = new RegExp(
  String.raw`(?:\b${PACKAGE}\s{0,2}(?:==|=|:|\s)\s{0,2}[\x60'"]?(${NUMBER})|==\s{0,2}(${NUMBER})|\b(v\d{1,4}\.\d{1,4}(?:\.\d{1,6}){0,2})\b|\b(?:version|release|build|版本)[\s:：=\x60'"]{1,6}(?:of\s{1,3}${PACKAGE}\s{1,3}(?:of\s{1,3})?)?[\x60'"]?(${NUMBER})|\b(b\d{3,5})\b)`,
  'gi',
);
// In a clause that names a regression's two ends ("between torch 2.10.0 and 2.11.0") a bare three-part number is a version too.
const BARE = new RegExp(String.raw`(?<![\w.])(\d{1,4}\.\d{1,4}\.\d{1,6}(?:[.-]?(?:rc|post|dev)\d{0,8})?(?:\+\w[\w.]{0,19})?)(?!\w|\.\d)`, 'g');
const PACKAGE_BEFORE = new RegExp(String.raw`\b(${PACKAGE})\b[^\n]{0,25}$`, 'i');

// A clause that says a version works: "works fine", "is working perfectly", "everything works", "no problem", "正常".
const WORKS =
  /\b(?:works?|worked|working|runs? fine|ran fine|(?:is|was|are|were) fine|no (?:problems?|issues?|errors?|oom)|good version|known[- ]good|last good)\b|正常|没(?:有)?问题|可以(?:跑|运行|用)?/i;
// ... unless it says it does not: "never works", "doesn't work", "not working", "no longer works", "不能", "无法".
const NOT_WORKS = /\b(?:not|n't|never|no longer|stopped|fails? to)\s{1,3}(?:\w{1,12}\s{1,3})?(?:works?|worked|working|run)|不(?:能|行)|无法|不正常/i;
// A clause that says a version fails: the failure's words, a labelled bad version, or what changed since it.
const FAILS =
  /\b(?:out of memory|OOM|fail(?:s|ed|ing)?|crash(?:es|ed)?|error|broken|bad|buggy|regress\w{0,4}|leak\w{0,3}|never works|not working|doesn't work|does not work)\b|报错|显存(?:不足|溢出|爆)|失败|崩溃/i;
// The bad one named by what came after it: "after b1697", "since 2.11.0", "after upgrading to vllm 0.6.0", "升级到 X 后",
// "upgraded from 4.51.3 to 4.53.0" (the version upgraded to).
const AFTER_VERSION =
  /\b(?:upgrad|updat)\w{0,4}\s{1,3}(?:from\s{1,3}[^\s]{1,40}\s{1,3})?to\s{1,3}$|\b(?:after|since)\s{1,3}(?:(?:upgrad|updat|mov|switch)\w{0,4}\s{1,3}(?:to\s{1,3})?)?(?:the\s{1,3})?(?:[\w.-]{1,30}\s{0,2})?$|(?:升级|更新)(?:到|至)?\s{0,3}$/i;
// "regression between torch 2.10.0 and 2.11.0", "regression from X to Y": the first worked, the second fails.
const REGRESSION_PAIR = /\bregress\w{0,4}\s{1,3}(?:between|from)\b/i;

// The report says it started with an upgrade, naming no version: "after upgrading transformers", "since the last
// update", "worked with the previous version", "升级后", "之前的版本正常".
const UPGRADE_TOLD = new RegExp(
  String.raw`\b(?:after|since)\s{1,3}(?:I\s{1,3}|we\s{1,3})?(?:upgrad|updat)\w{0,4}\s{1,3}(?:to\s{1,3})?(?:the\s{1,3}(?:latest|newest|new)\s{1,3})?(?:${PACKAGE}|version|release)\b|\bsince\s{1,3}the\s{1,3}(?:last\s{1,3}|latest\s{1,3}|recent\s{1,3})?(?:upgrade|update)\b|\b(?:worked|works|was working|ran)\s{1,3}(?:fine\s{1,3}|well\s{1,3})?(?:with|on|in)\s{1,3}(?:the\s{1,3})?(?:previous|older|old|last|earlier)\s{1,3}(?:version|release|build)\b|(?:升级|更新)(?:了)?[^\n。]{0,20}(?:之?后|以后)|(?:之前|以前|旧|老)(?:的)?版本[^\n。]{0,10}(?:正常|没(?:有)?问题|可以)`,
  'i',
);

// An upgrade tried as a fix that did not help ("after upgrading to the latest version it still OOMs") tells no regression.
const STILL = /\bstill\b|\bsame (?:error|problem|issue)\b|仍然|依然|还是/i;

export interface ToldRegression {
  /** The version said to work, as written with its package ("torch==2.10.0+cu130", "b1696"). */
  good?: string;
  /** The version said to fail. */
  bad?: string;
  /** The report's line that tells it, quoted. */
  line: string;
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
    const number = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5]).replace(/^v(?=\d)/, '');
    const pkg = PACKAGE_BEFORE.exec(clause.slice(Math.max(0, m.index - 30), m.index + m[0].length - (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5]).length));
    out.push({ at: m.index, end: m.index + m[0].length, number, text: pkg ? `${pkg[1]} ${number}` : number });
  }
  return out;
}

// Clauses: sentences, and the halves of a contrast ("works with X but fails with Y", "X 正常，Y 报错").
const CLAUSE_SPLIT = /(?<=[.!?])\s{1,4}|[;。；！？]|,?\s{1,3}(?:but|while|whereas|however)\s{1,3}|，\s{0,2}(?:但|而)?/i;

/** The regression the report tells: a version that worked and another that fails, or an upgrade since which it fails. */
export function readToldRegression(text: string): ToldRegression | undefined {
  let good: string | undefined;
  let bad: string | undefined;
  let goodLine = '';
  let badLine = '';
  let upgradeLine: string | undefined;
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (!upgradeLine && UPGRADE_TOLD.test(line) && !STILL.test(line)) upgradeLine = line;
    if (!/\d/.test(line)) continue;
    for (const clause of line.split(CLAUSE_SPLIT)) {
      const versions = versionsIn(clause);
      const pair = REGRESSION_PAIR.test(clause) ? versionsIn(clause, true) : [];
      if (pair.length >= 2 && pair[0].number !== pair[1].number) {
        good ??= pair[0].text;
        bad ??= pair[1].text;
        goodLine ||= line;
        badLine ||= line;
        continue;
      }
      if (versions.length === 0) continue;
      versions.forEach((v, i) => {
        // The words between the previous version and this one speak of it ("works with X and fails with Y"); where they
        // say nothing, the words after it up to the next one ("In b1696, everything works fine").
        const before = clause.slice(i > 0 ? versions[i - 1].end : 0, v.at);
        const after = clause.slice(v.end, i + 1 < versions.length ? versions[i + 1].at : clause.length);
        const polarity = polarityOf(before, true) ?? polarityOf(after, false);
        if (polarity === 'bad') {
          bad ??= v.text;
          badLine ||= line;
        } else if (polarity === 'good') {
          good ??= v.text;
          goodLine ||= line;
        }
      });
    }
  }
  const number = (s: string | undefined) => s?.replace(/^.*\s/, '');
  if (good && bad && number(good) !== number(bad)) return { good, bad, line: quote(badLine || goodLine) };
  if (bad && upgradeLine) return { bad, line: quote(upgradeLine) };
  if (upgradeLine && (good || bad || FAILS.test(upgradeLine))) return { good, bad, line: quote(upgradeLine) };
  if (upgradeLine) return { line: quote(upgradeLine) };
  return undefined;
}

/**
 * A memory diagnosis's fixes with the told regression's: first where the report names the version that fails (with the
 * one that worked, or the upgrade since which it fails), second (after the diagnosis's own first fix) where it tells an
 * upgrade without a version, which is a comparison to make rather than the lever itself.
 */
export function withToldRegression(fixes: ComputedFix[], regression: ToldRegression | undefined, loc: Locale | undefined): ComputedFix[] {
  if (!regression) return fixes;
  const { good, bad, line } = regression;
  const words = { good: good ?? '', bad: bad ?? '', line: `"${line}"` };
  const summary =
    good && bad
      ? t(loc, 'fix.versionRegression.pair', words)
      : bad
        ? t(loc, 'fix.versionRegression.since', words)
        : t(loc, 'fix.versionRegression.told', words);
  const fix: ComputedFix = { kind: 'advice', summary, changes: {} };
  return bad ? [fix, ...fixes] : [...fixes.slice(0, 1), fix, ...fixes.slice(1)];
}
