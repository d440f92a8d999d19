// The vocabulary of the rules index: a rule (an invariant of DESIGN.md, a facet of one, or a rule of
// our own) and every place that enforces or checks it. Each place names something in the code that
// rules.test.ts looks up (a SAFETY_RULES key, a CRD rule's message, a policy validation's message,
// a webhook path, a doctor code, an invariant checker, a file and the names it contains), so the
// index cannot name a place that does not exist.
import type { DoctorCode } from '../doctor/checks.ts';
import type { InvariantId } from '../invariants/check.ts';
import type { PoolRolloutViolation } from '../invariants/pool-rollout.ts';
import type { PolicyName } from '../policies/manifests.ts';
import type { SafetyRules } from '../reconcile/safety-rules.ts';
import type { CustomKind } from '../schema/kinds.ts';

/** A file under packages/core/src and names (identifiers or literals) it contains. */
interface InFile {
  file: string;
  mentions: readonly string[];
  /** What it does there, for the table (markdown). */
  note: string;
}

export type Place =
  /** Layer 1, writers using core: a rule of SAFETY_RULES, which the reconcilers and holder operations apply. */
  | { at: 'safety-rule'; rule: keyof SafetyRules }
  /** Layer 1: other core code every writer that uses core runs. */
  | ({ at: 'core' } & InFile)
  /** Layer 2, the API server: a CEL rule (x-kubernetes-validations) of a generated CRD, by its message. */
  | { at: 'crd'; kind: CustomKind; message: string }
  /** Layer 2: a validation of a ValidatingAdmissionPolicy (the `policies` component), by its message. */
  | { at: 'policy'; policy: PolicyName; message: string }
  /** Layer 3: a path of WEBHOOK_RULES whose rule refuses the write. */
  | { at: 'webhook'; path: string; note?: string }
  /** Layer 4, detection: what the controller does when it finds the rule broken (Events, conditions, repairs). */
  | ({ at: 'controller' } & InFile)
  /** Layer 4: a `claimctl doctor` check. */
  | { at: 'doctor'; code: DoctorCode; note?: string }
  /** An invariant checker of invariants/ (core tests, the simulator, e2e): an exported function or class. */
  | { at: 'check'; checker: string; note?: string };

export interface Rule {
  /**
   * Stable: DESIGN.md's invariant id, with a facet after a dot where one invariant has several rows
   * (C1.epoch); a name of our own for a rule that is no invariant (pool-name-immutable).
   */
  id: string;
  /** The invariant this rule is (part of): DESIGN.md's, or the pool rollout's convergence check. */
  invariant?: InvariantId | PoolRolloutViolation['invariant'];
  /** One line (markdown). */
  statement: string;
  places: readonly Place[];
}

// One constructor a kind of place, so that a rule's places read as a list.
export const safetyRule = (rule: keyof SafetyRules): Place => ({ at: 'safety-rule', rule });
export const inCore = (file: string, mentions: readonly string[], note: string): Place => ({
  at: 'core',
  file,
  mentions,
  note,
});
export const crdRule = (kind: CustomKind, message: string): Place => ({ at: 'crd', kind, message });
export const policyRule = (policy: PolicyName, message: string): Place => ({ at: 'policy', policy, message });
export const webhook = (path: string, note?: string): Place => ({ at: 'webhook', path, note });
export const controller = (file: string, mentions: readonly string[], note: string): Place => ({
  at: 'controller',
  file,
  mentions,
  note,
});
export const doctor = (code: DoctorCode, note?: string): Place => ({ at: 'doctor', code, note });
export const checker = (name: string, note?: string): Place => ({ at: 'check', checker: name, note });
