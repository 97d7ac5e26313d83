// The card as the log names or states it (the OOM message's capacity is in figures).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface CardPart {
  gpuName?: string;
  gpuMemoryMiB?: number;
  /** The card's memory as the report states it in words ("A100 80G", "4090 24G显存", "8gb graphics card"). */
  statedGpuMemoryMiB?: number;
  /** The card's memory from its model name alone (knowledge/gpus.json: "GTX 1050 Ti" -> 4 GiB), when nothing else states it. */
  gpuModelMemoryMiB?: number;
  /**
   * The largest memory the card the log names is sold with, when its name does not fix it ("A100" -> 80 GiB;
   * knowledge/gpus.json families): a static part above it fits none of its sizes (levers/static-order.ts).
   */
  familyMaxMiB?: number;
}
