// The index of the rules: every invariant of DESIGN.md (C1, C2, P1-P8, M1, M2, L1, S1), the pool
// rollout's convergence, and the rules of "Where each rule is enforced" that are no invariant, each
// with its one-line statement and every place that enforces or checks it: core's writers (safety
// rules), the CRDs' CEL, the admission policies, the webhook, the controller, `claimctl doctor` and
// the invariant checkers. rules.test.ts finds every place in the code and every rule-bearing thing of
// the code here; README.md's table is rendered from it (table.ts, `pnpm manifests`).
import { CAPTURE_RULES } from './capture-rules.ts';
import { CLAIM_RULES } from './claim-rules.ts';
import type { Rule } from './places.ts';
import { POD_RULES } from './pod-rules.ts';
import { POOL_RULES } from './pool-rules.ts';
import { WRITER_RULES } from './writer-rules.ts';

export const RULES: readonly Rule[] = [
  ...CAPTURE_RULES,
  ...CLAIM_RULES,
  ...POD_RULES,
  ...POOL_RULES,
  ...WRITER_RULES,
];
