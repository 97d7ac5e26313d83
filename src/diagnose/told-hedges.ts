// What in a report's clause tells no failure, or no failure of this run: negations, hedges, requests, the past, lists of
// possible causes and questions (told-failure.ts reads a clause against them).

// What tells no failure: a negation or an avoidance before the predicate, in the same clause.
export const NEGATED =
  /\b(?:avoid\w{0,3}|prevent\w{0,3}|without|no|not|never|none|nothing|cannot|instead\s{1,3}of|in\s{1,3}case|free\s{1,3}of|(?:do|does|did|is|was|are|were|wo|would|could|ca|has|have|had)n['\u2019]?t)\b|避免|防止|不会|没有|没|不再|以免|并未|未曾|并没有|并不/i;
// Words of not knowing are no negation of the failure: "I have no idea why GPU memory keeps increasing".
export const NOT_KNOWING = /\b(?:no\s{1,3}idea|not\s{1,3}sure|(?:do|does|did)(?:\s{1,3}not|n['\u2019]?t)\s{1,3}know|not\s{1,3}certain)\b|不知道|不清楚/gi;
// Negation and hedges count only close before the predicate (a clause may start with an unrelated "no").
export const NEGATION_WINDOW = 32;
// Avoiding it is no account of it: "to avoid CUDA out of memory", "without running out of memory", "如何避免显存不足".
export const AVOIDED = /\b(?:avoid\w{0,3}|prevent\w{0,3}|without|instead\s{1,3}of|in\s{1,3}case)\b|避免|防止|以免/i;
// A hedge: a condition or a possibility ("if it runs out", "it might run out", "如果", "可能会导致"). A hedged clause
// tells nothing, but takes nothing back either (a report often guesses at the failure it has).
export const HEDGED =
  /\b(?:if|whether|might|may|could|would|should|possibly|potentially|probably|perhaps|estimat\w{0,4}|calculat\w{0,4}|forecast\w{0,3})\b|\bpredict\w{0,4}\s{1,3}(?:the\s{1,3}|whether\s{1,3}|when\s{1,3}|if\s{1,3}|an?\s{1,3})?$|如果|假如|是否|可能/i;
// A feature request or a proposal speaks of a failure the tool should handle, not one that happened.
export const REQUEST = /^\s{0,4}\[?\s{0,2}(?:feature(?:\s{1,3}request)?|enhancement|proposal|RFC)\s{0,2}[\]:]/i;
// A failure of the past, already solved, is not this paste's: "At the beginning I was getting out of memory error".
export const PAST =
  /\b(?:at\s{1,3}(?:the\s{1,3})?(?:beginning|start|first)|at\s{1,3}first)\b(?!\s{1,3}(?:of\s{1,3}(?:the\s{1,3})?)?(?:epoch|step|iteration|iter|batch|forward|backward)s?\b)|\b(?:previously|used\s{1,3}to|(?:was|were|got|has\s{1,3}been|have\s{1,3}been)\s{1,3}(?:solved|fixed|resolved|gone))\b|一开始|之前|以前|已经解决|解决了/i;
// An item of a list of possible causes ("3) Not enough RAM.") is a hypothesis, not an account; an item that tells an event
// with a finite verb ("2) Sometimes it errors out because it runs out of system RAM", "- the run crashed") is an account.
export const LIST_ITEM = /^\s{0,6}(?:\d{1,2}[.)]|[-*\u2022])\s/;
export const LIST_EVENT =
  /\b(?:runs|ran)\s{1,3}out\b|\b(?:errors|errored)\s{1,3}out\b|\b(?:crashes|crashed|dies|died|fails|failed)\b|\b(?:was|got|gets)\s{1,3}killed\b/i;
// A question about capacity: how much memory, is it enough, what is required ("需要多少显存", "够不够").
export const CAPACITY_QUESTION =
  /\bhow\s{1,3}much\b|\benough\b[^\n]{0,60}[?？]\s*$|\b(?:need|needs|needed|require[sd]?|requirement)\b[^\n]{0,60}[?？]\s*$|多少|够不够|够吗|够用吗|需要多大/i;
// A cause guessed in a question: "is it because the GPU memory is not enough?", "是因为显存不够吗", "due to ...?"
export const GUESSED_CAUSE =
  /\b(?:is|was)\s{1,3}(?:it|this|that)\s{1,3}(?:the\s{1,3})?(?:because|due\s{1,3}to|caused\s{1,3}by|issue|problem|reason)\b|\bdue\s{1,3}to\b[^\n]{0,80}[?？]\s*$|是(?:因为|由于|不是)[^\n]{0,40}[吗嘛？?]\s*$/i;
