// The shape every admission rule shares: pure functions from (old, new, user) to a verdict.
// Rules never throw on garbage: objects arrive as `unknown` and are read through `read.ts`.
import type { PodClaimIndex } from '../claim-index.ts';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
}

export interface Violation {
  /** A field path as the API server prints it, e.g. `spec.podName` or `metadata.labels[k]`. */
  field: string;
  message: string;
}

export type Verdict =
  | { allowed: true; warnings: string[] }
  | { allowed: false; violations: Violation[]; warnings: string[] };

export interface RuleInput {
  operation: Operation;
  /** The object before the write (UPDATE, DELETE); undefined on CREATE. */
  oldObject: unknown;
  /** The object after the write (CREATE, UPDATE); undefined on DELETE. */
  object: unknown;
  userInfo: UserInfo;
  subResource?: string;
  namespace?: string;
  name?: string;
}

/** Who the controller is: the only identity allowed to write a claim's podName/nodeName/sourcePod. */
export interface ControllerIdentities {
  usernames: readonly string[];
  groups: readonly string[];
}

export interface RuleContext {
  controller: ControllerIdentities;
  index: PodClaimIndex;
}

export type Rule = (input: RuleInput, ctx: RuleContext) => Verdict;

export function verdict(violations: Violation[], warnings: string[] = []): Verdict {
  return violations.length === 0 ? { allowed: true, warnings } : { allowed: false, violations, warnings };
}

export function isController(user: UserInfo, ids: ControllerIdentities): boolean {
  if (user.username !== undefined && ids.usernames.includes(user.username)) return true;
  return (user.groups ?? []).some((g) => ids.groups.includes(g));
}
