// The memory budget against the card, as the reply quotes it (levers.ts, levers/budget.ts).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface BudgetPart {
  /** The static part against the card when it alone does not fit ("13B × 16 B/param ≈ 193.7 GiB ≥ 24.0 GiB"). */
  staticWhy?: string;
  /** The static part's share of the card when it takes most of it but not all (levers.ts staticDominates; ZeRO per GPU). */
  staticShareWhy?: string;
  /** The weights' budget against the card when fp32 is what does not fit (src/diagnose/levers/budget.ts). */
  budgetWhy?: string;
  /** The 16-bit (or stated 8-bit) weights against the card, and at 4 bits, when quantizing is the lever (levers/quantize.ts). */
  quantizeWhy?: string;
  /** Full training over the card: the per-GPU share over the launch's GPUs, or what offloading leaves (levers/static-order.ts). */
  shardWhy?: string;
}
