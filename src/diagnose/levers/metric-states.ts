// TorchMetrics' list states (issue 23, growth): a metric that needs the whole set to compute keeps every update's
// preds and targets in list states (add_state(..., default=[], dist_reduce_fx="cat")) on the metric's device, the GPU,
// until reset() empties them. The curve family does so with thresholds=None (precision_recall_curve.py is the base of
// ROC, AUROC, AveragePrecision and the *AtFixed* metrics), and so do CalibrationError, Spearman / Kendall and the
// retrieval metrics. An instance never reset (one per evaluation, or a training-time metric never reset between
// epochs) keeps all of them: the card fills with live tensors, whatever the batch and whatever the allocator does.
// Read from TorchMetrics' own names: its task-prefixed classes (0.11+), its module paths and its frames (the list
// states are concatenated by utilities/data.py's dim_zero_cat at compute()). Bounded patterns (untrusted input, linear).
import type { Incident, StackPart } from '../incident/index.js';
import type { LogText } from '../normalize.js';

const MAX_LINE = 2000;
const CURVE = String.raw`(?:AUROC|AveragePrecision|ROC|PrecisionRecallCurve|RecallAtFixedPrecision|PrecisionAtFixedRecall|SpecificityAtSensitivity|SensitivityAtSpecificity|CalibrationError)`;
// Its construction warning ("Metric `ROC` will save all targets and predictions in buffer", 0.4-0.10) is printed by
// every run that builds one, failing or not, so it is not read: only a metric the paste names beside the failure, or
// the failure raised inside TorchMetrics' own update / forward / compute frames.
const LIST_STATE_METRIC = new RegExp(
  String.raw`\bfrom torchmetrics(?:\.\w{1,30}){0,2} import [^\n]{0,200}?\b(?:Binary|Multiclass|Multilabel)?${CURVE}\b|\b(?:Binary|Multiclass|Multilabel)${CURVE}\b|\btorchmetrics(?:\.classification)?\.${CURVE}\b|\btorchmetrics(?:\.\w{1,30}){0,2}\.(?:SpearmanCorrCoef|KendallRankCorrCoef|Retrieval\w{1,30}|CatMetric)\b|torchmetrics[\\/](?:classification[\\/](?:precision_recall_curve|roc|auroc|average_precision|calibration_error)|utilities[\\/]data)\.py|torchmetrics[\\/](?:metric|collections)\.py", line \d{1,6}, in (?:forward|update|compute|wrapped_func|_forward_reduce_state_update|_forward_full_state_update)\b`,
);

/** The TorchMetrics metric (or frame) that keeps list states, as the paste names it. */
export function readMetricStates(log: LogText): Pick<StackPart, 'metricListState'> {
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (!/AUROC|ROC|Precision|Calibration|torchmetrics|Spearman|Kendall|Retrieval|CatMetric/.test(line)) continue;
    const m = LIST_STATE_METRIC.exec(line);
    if (m)
      return {
        metricListState: m[0]
          .replace(/\\/g, '/')
          .replace(/", line \d{1,6}, in /, ' in ')
          .replace(/^from torchmetrics\S{0,60} import .*?\b(\w+)$/, '$1'),
      };
  }
  return {};
}

export const METRIC_STATE_CONDITIONS = {
  metric_list_states: ({ incident: i }: { incident: Incident }) => i.stack.metricListState !== undefined,
  no_metric_list_states: ({ incident: i }: { incident: Incident }) => i.stack.metricListState === undefined,
};
