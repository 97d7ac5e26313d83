// What a growing memory is kept by, where the paste shows it (issue 23). Memory that climbs at the same
// settings is kept across steps; the fix that releases it (.item(), .detach(), not keeping outputs) is the
// first lever when the paste shows what is kept: code that adds a loss tensor to a running total or appends
// outputs to a list, or the report naming it ("without .item()", "one more tensor each iteration"). Without
// that evidence the first answer is the experiment that finds it (allocated against reserved, a memory
// summary or snapshot), since growth can also be the allocator caching blocks for ever larger inputs.
// Every pattern is bounded and applied per line: linear in the paste's length.

import { incidentOf, newIncident, type Incident } from '../incident/index.js';
import { boundedLines } from '../lines.js';
const MAX_LINES = 20_000;
const MAX_LINE = 600;
const QUOTE_CHARS = 120;

// A running total of a loss tensor: "total_loss += loss", "epoch_loss = epoch_loss + loss_g" (not loss.item(), float(loss), loss.detach()).
// Also quoted inside a sentence: "total_loss += loss 和 val_loss += loss", "`total_loss += loss` and ..." (a conjunction or punctuation follows, not .item()).
const LOSS_TOTAL =
  /\b\w{1,40}\s{0,3}(?:\+=|=\s{0,3}\w{1,40}\s{0,3}\+)\s{0,3}(?:\w{1,30}\.)?\w{0,30}loss\w{0,20}`?(?:\s*(?:[;#)]|$)|\s{1,3}(?:和|与|及|and\b)|\s{0,2}[，。、；）])/i;
// Outputs kept in a list as they are: "preds.append(outputs)", "all_logits.append(logits)".
const APPEND_OUTPUT = /\.(?:append|extend)\(\s{0,3}(?:outputs?|logits|preds?|predictions?|loss\w{0,20}|out|y_hat|features)\s{0,3}\)/;
// A running-average meter fed the loss tensor itself, the ImageNet example's AverageMeter idiom written without .item()
// ("losses.update(loss, input.size(0))", "meter.update(loss_total)"): the meter sums tensors and keeps every step's graph.
const METER_UPDATE = /\b\w{0,30}(?:loss|meter)\w{0,20}\.update\(\s{0,3}(?:\w{1,30}\.)?\w{0,30}loss\w{0,20}\s{0,3}(?:,|\))/i;
// The report naming what is kept: a loss kept without .item(), a tensor more each iteration, losses stored as tensors.
const NAMED =
  /without\s{1,3}(?:calling\s{1,3})?\.?item\(\)|\.item\(\)\s{1,3}(?:should|must|needs? to)\s{1,3}be\s{1,3}(?:added|used|called)|\bone more tensor each (?:iteration|step)\b|\b(?:losses|loss tensors?|outputs)\s{1,3}(?:are\s{1,3}|were\s{1,3})?(?:accumulat|stor|kept|saved|append)\w{0,4}\b[^\n]{0,40}\b(?:tensors?|graph|history|Variables?)\b|\bcompounding number of (?:loss )?tensors\b/i;

// The report naming the input's length or size as what drives the memory: "it's probably the audio length",
// "应该是音频长度的问题", "because of the longer sequences", "caused by large images". Memory that rises with the input
// is no climb at constant work per step: a growth told beside it is the input, not something kept.
const INPUT_NOUN = String.raw`(?:sequence|seq|input|audio|image|img|text|sentence|context|prompt|token|video|clip|point\s{0,2}cloud|scene)s?`;
const INPUT_CAUSE = new RegExp(
  String.raw`\b(?:due\s{1,3}to|because\s{1,3}of|caused\s{1,3}by|problem\s{1,3}(?:is|with)|issue\s{1,3}(?:is|with)|depends?\s{1,3}on)\s{1,3}(?:the\s{1,3})?(?:(?:long(?:er|est)?|large(?:r|st)?|big(?:ger|gest)?|variable)\s{1,3}${INPUT_NOUN}|${INPUT_NOUN}\s{1,3}(?:length|size|resolution)s?)\b` +
    String.raw`|(?:音频|序列|句子|文本|输入|图片|图像|视频|样本)\s{0,2}(?:长度|尺寸|大小|太长|过长|太大)\s{0,2}的?\s{0,2}(?:问题|导致|引起|造成|有关|相关)`,
  'i',
);

/** The line that shows what the growth keeps, when the paste has one (facts.keptReference). */
export function readKeptReference(text: string): Incident {
  let inputCause: string | undefined;
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (!line) continue;
    inputCause ??= INPUT_CAUSE.exec(line)?.[0];
    // Code that already keeps numbers is not evidence: "+= loss.item()" ends on item() and fails LOSS_TOTAL.
    if (LOSS_TOTAL.test(line) || APPEND_OUTPUT.test(line) || METER_UPDATE.test(line) || NAMED.test(line)) {
      const quote = line.trim();
      return incidentOf({ series: { keptReference: quote.length > QUOTE_CHARS ? quote.slice(0, QUOTE_CHARS) + '…' : quote } });
    }
  }
  return inputCause ? incidentOf({ series: { riseWithInput: inputCause } }) : newIncident();
}
