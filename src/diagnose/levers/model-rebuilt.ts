// Growth by accumulation (issue 23, growth class): a TensorFlow/Keras model built or loaded again and again in one
// process keeps every earlier copy in the graph and its session, so the card fills after N iterations, games or loads,
// whatever the batch. Two kinds of evidence, each in a fixed form:
// - TensorFlow's unique-name suffix on the failed op's layer scope: a layer name used again in one graph becomes
//   "name_1", "name_2", ..., so an op under "fc1_24/kernel/Initializer" is the 25th copy of that layer being created.
//   Taken only at 20 copies or more and only where the op creates variables (Initializer: the model is being built)
//   or the report tells the run went on before the failure: one deep model can hold 20 layers of one default name,
//   but it does not create its weights after running.
// - The report telling a model built, loaded or compiled per unit of a repeated loop or more than once ("load a new
//   model so many times", "Model.fit() in a loop", "每次循环都创建模型"; up to two words may qualify the model) in a
//   paste of the TF/Keras stack. A line that says the model is built once is no such evidence.
// The lever is what accumulates: build or load the model once outside the loop, or clear_session() before each build.
// Bounded patterns applied per line: linear in the paste's length.
import type { Category } from '../rule-types.js';
import type { Locale } from '../../core/i18n.js';
import type { Incident, StackPart } from '../incident/index.js';
import type { LogText } from '../normalize.js';

const MAX_LINE = 1200;
const MAX_LINES = 20_000;
const QUOTE_CHARS = 140;
/** Copies of one layer scope at which one model is no longer a likely owner of them all. */
const LAYER_COPIES_AT = 20;

// TensorFlow's op-name forms: TF2 eager "[Op:Add] name: fc1_24/kernel/...", TF1 "Caused by op 'x_3/...'", "[[Node: x_3/...", "{{node x_3/...".
const LAYER_OP = /(?:\bname: |Caused by op '|\[\[Node: |\{\{node )([A-Za-z][\w.-]{0,80}?_(\d{1,5})\/[\w./-]{0,160})/;
// A model scope whose number is its depth after a version (TF-slim's resnet_v1_50, resnet_v2_101): a name, not a copy count.
const VERSIONED_DEPTH = /_v\d{1,2}_\d{1,5}\/$/i;
const TF_STACK = /ResourceExhaustedError|\btensorflow\b|\bkeras\b|\btf\.keras\b|\bBFCAllocator\b|GPU_0_bfc/i;
const VERB = String.raw`(?:(?:re-?)?load(?:s|ed|ing)?|(?:re-?)?build(?:s|ing)?|(?:re-?)?built|(?:re-?)?creat(?:e|es|ed|ing)|instantiat(?:e|es|ed|ing)|(?:re-?)?compil(?:e|es|ed|ing)|fit(?:s|ting)?|defin(?:e|es|ed|ing)|(?:re-?)?initiali[sz](?:e|es|ed|ing))`;
const MODEL_PHRASE =
  String.raw`(?:\b${VERB}\s{1,3}(?:[\w.\`'-]{1,40}\s{1,3}){0,2}(?:model|network|graph|session)s?\b` +
  String.raw`|\b(?:model|Model|keras\.Model|tf\.keras\.Model)\.(?:load|fit|compile|build)\w{0,6}\(\)|\bload_model\b)`;
const REPEAT =
  String.raw`(?:\bmore\s{1,3}than\s{1,3}once\b|\b(?:in|inside|within)\s{1,3}(?:a|the|my|an?\s{1,3}outer)\s{1,3}(?:for\s{1,3}|while\s{1,3})?loop\b|\b(?:so\s{1,3})?(?:many|multiple|several)\s{1,3}times\b|\brepeatedly\b|\bagain\s{1,3}and\s{1,3}again\b|\bover\s{1,3}and\s{1,3}over\b` +
  String.raw`|\b(?:each|every|per)\s{1,3}(?:new\s{1,3})?(?:iteration|game|episode|fold|frame|image|call|request|round|generation|trial|run|loop)\b)`;
const TOLD_EN = new RegExp(String.raw`${MODEL_PHRASE}[^\n]{0,60}?${REPEAT}|${REPEAT}[^\n]{0,60}?${MODEL_PHRASE}`, 'i');
const TOLD_ZH =
  /(?:循环|每次|每一次|每个|每轮|反复|多次)[^\n，。]{0,20}(?:加载|载入|创建|新建|构建|定义|实例化|编译)[^\n，。]{0,6}(?:模型|网络|计算图|session)|(?:加载|载入|创建|新建|构建)[^\n，。]{0,6}模型[^\n。]{0,20}(?:很多次|多次|反复|循环)/;
// The model built once: the sentence is about reuse, not rebuilding ("more than once" is a repetition, not this).
const ONCE = /(?<!\bthan\s{1,3})\bonce\b|只(?:加载|创建|构建)一次/i;

/** The evidence of a model rebuilt in one TF/Keras process, when the paste shows or tells one. */
export function readModelRebuilt(log: LogText): Partial<StackPart> {
  let told: string | undefined;
  let layer: Partial<StackPart> = {};
  let tf = false;
  for (let l = 0; l < log.lineCount && l < MAX_LINES; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (!tf && TF_STACK.test(line)) tf = true;
    if (layer.kerasLayerCopies === undefined) {
      const m = LAYER_OP.exec(line);
      if (m && Number(m[2]) + 1 > LAYER_COPIES_AT && !VERSIONED_DEPTH.test(m[1].slice(0, m[1].indexOf('/') + 1)))
        layer = { kerasLayerCopies: Number(m[2]) + 1, kerasLayerInit: m[1].includes('/Initializer/'), kerasLayerOp: m[1] };
    }
    if (told === undefined && (TOLD_EN.test(line) || TOLD_ZH.test(line)) && !ONCE.test(line)) told = line.trim();
  }
  if (!tf) return {};
  const quote = told && (told.length > QUOTE_CHARS ? told.slice(0, QUOTE_CHARS) + '…' : told);
  if (quote) return { ...layer, modelRebuilt: `"${quote}"` };
  return layer.kerasLayerCopies !== undefined ? layer : {};
}

/** The paste shows or tells a model rebuilt per iteration, and the failed op is not already read as Keras's per-model scope. */
export function modelRebuilt(i: Incident): boolean {
  if (i.stack.kerasGraphModels !== undefined) return false;
  if (i.stack.modelRebuilt !== undefined) return true;
  return i.stack.kerasLayerCopies !== undefined && (i.stack.kerasLayerInit === true || i.progress.runToldBeforeFailure !== undefined);
}

/** The words for the fix: the quote that tells the rebuild, else the op whose scope carries the copy count. */
export function modelRebuiltWords(i: Incident): void {
  if (!modelRebuilt(i) || i.stack.modelRebuilt !== undefined) return;
  i.stack.modelRebuilt = `the failed op '${i.stack.kerasLayerOp}' is copy number ${i.stack.kerasLayerCopies} of that layer in one graph (TensorFlow adds _1, _2, ... to a name used again)`;
}

export const MODEL_REBUILT_CONDITIONS = {
  model_rebuilt: ({ incident: i }: { incident: Incident }) => modelRebuilt(i),
};

const OOM_CATEGORIES = new Set<Category>(['cuda_oom', 'fragmentation']);
const TITLE: Record<Locale, string> = {
  en: 'Growing GPU memory: the model is built again in the same process until the card is full',
  zh: 'GPU 显存持续增长：模型在同一个进程里被一再重建，直到显卡用满',
};

/** An OOM whose paste shows the model rebuilt per iteration is where the accumulation ended: the growth's verdict. */
export function modelRebuiltVerdict(category: Category, incident: Incident, loc?: Locale): { category: Category; title: string } | undefined {
  if (!OOM_CATEGORIES.has(category) || !modelRebuilt(incident)) return undefined;
  return { category: 'growing_memory_leak', title: TITLE[loc ?? 'en'] ?? TITLE.en };
}
