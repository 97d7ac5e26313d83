// Where a told failure's own account places it (issue 23: each phase has its own levers), read from the clause that
// tells it and the other clauses of its line (told-failure.ts reads the failure). Bounded, linear.
import type { Phase } from './phase.js';

export const MAX_CLAUSES = 12;
// Clauses: sentence ends, and a contrast that starts a new claim ("..., but GPU memory still runs out", "，但...").
// Chinese clauses run on with "，": each is its own claim there ("内存一直在上涨，显存没有变化").
export const CLAUSE_BREAK = /[.!?](?=\s|$)|[。！？；;，]|,?\s{1,3}(?:but|however|although|though|whereas|yet)\s{1,3}/i;

// The phase the account names beside the failure (issue 23: each phase has its own levers). Evaluation and inference
// ("during validation", "推理时", "运行到验证的时候"), generation, loading the model or checkpoint, loading the data.
// The words must place the failure there ("推理时", "到验证"): "用 vLLM 进行推理" names the job, not the phase it failed in.
const PHASE_WORDS: [Phase, RegExp][] = [
  [
    'load',
    /\b(?:while|when|during|at)\s{1,3}(?:the\s{1,3})?(?:time\s{1,3}of\s{1,3})?(?:loading|load(?:ing)?\s{1,3}of)\s{1,3}(?:the\s{1,3})?(?:model|checkpoint|weights)\b|加载模型|模型加载|加载权重|加载checkpoint/i,
  ],
  [
    'data',
    /\b(?:while|when|during)\s{1,3}(?:loading|load|reading|preprocessing)\s{1,3}(?:the\s{1,3})?(?:data|dataset|images)\b|\bload(?:ed|ing)?\s{1,3}(?:the\s{1,3})?(?:\w{2,12}\s{1,3}){0,3}(?:datasets?|data\s{1,3}batch)\b|加载数据|读取数据|数据加载/i,
  ],
  ['generate', /\b(?:during|while|when|in)\s{1,3}(?:the\s{1,3})?(?:generation|generating)\b|生成(?:时|的时候|过程)/i],
  [
    'eval',
    /\b(?:during|in|while|when|at|on|upon)\s{1,3}(?:the\s{1,3})?(?:validation|validating|evaluation|evaluating|eval|inference|inferencing|testing|prediction|predicting)\b|\b(?:validation|evaluation|inference|testing)\s{1,3}(?:step|loop|phase|stage|time)\b|(?:验证|评估|评测|推理|测试|预测)(?:时|的时候|阶段|过程中?|集上)|(?:到|在)(?:验证|评估|评测|测试)/i,
  ],
];

// A clause that says its step went fine ("模型加载没问题", "loading the model works") names a phase the run passed, not the
// one it failed in: the failing clause's own phase first, else the line's other clauses that do not say so.
const WENT_FINE =
  /没问题|没有问题|没事|正常|成功|顺利|\b(?:fine|ok|okay)\b|\bworks?\b|\bworked\b|\bno\s{1,3}(?:problems?|issues?|errors?)\b|\bsucceed(?:s|ed)?\b|\bsuccessfully\b/i;
export function toldPhaseWords(clause: string, line: string): Phase | undefined {
  const of = (text: string) => PHASE_WORDS.find(([, words]) => words.test(text))?.[0];
  const own = of(clause);
  if (own) return own;
  const clauses = line.split(CLAUSE_BREAK).slice(0, MAX_CLAUSES);
  const rest = clauses.filter((c) => c && c !== clause && !WENT_FINE.test(c)).join(' ');
  // A phase the line says went fine ("模型加载成功", "the model loaded fine") is one the failure came after.
  const passed = new Set(clauses.filter((c) => c && WENT_FINE.test(c)).map(of));
  const phase = of(rest);
  return phase && !passed.has(phase) ? phase : undefined;
}
