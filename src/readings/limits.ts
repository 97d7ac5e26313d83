// Bounds that keep parsing cheap on hostile or accidental input (a 20 MB paste of repeated rows).
// Real outputs are far below them: a node has at most a few dozen GPUs and a few thousand processes.

/** Lines longer than this cannot be nvidia-smi table / free rows; parsers skip them. */
export const MAX_ROW_CHARS = 4096;
/** GPUs kept per parsed output; further rows are ignored. */
export const MAX_GPUS = 1024;
/** Processes kept per parsed output; further rows are ignored. */
export const MAX_PROCESSES = 65536;
/** XML elements read from one `nvidia-smi -q -x` document (8 GPUs with MIG is about 5,000). */
export const MAX_XML_ELEMENTS = 500_000;
