// The one shape of admission in core: a request (what the API server's AdmissionRequest carries),
// a violation, and the rules as pure functions from a request to a verdict. The webhook's rules, the
// ValidatingAdmissionPolicies' evaluator and the in-memory model all speak it. Rules never throw on
// garbage: objects arrive as `unknown` (the webhook's come from the wire) and are read through
// `read.ts`; the model's requests carry the stored objects (`AdmissionRequest<KubeObject>`).
import type { FieldCause } from './errors.ts';
import type { Kind } from './types.ts';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** authentication.k8s.io UserInfo as admission sees it (every field may be absent on the wire). */
export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
}

export interface AdmissionRequest<O = unknown> {
  operation: Operation;
  /** The kind written (a webhook route or the model knows it; the wire's request.kind is checked). */
  kind: Kind;
  /** 'status', 'scale', ... for writes through a subresource. */
  subResource?: string;
  namespace?: string;
  name?: string;
  userInfo: UserInfo;
  /** The object after the write (CREATE, UPDATE); undefined on DELETE. */
  object: O | undefined;
  /** The object before the write (UPDATE, DELETE); undefined on CREATE. */
  oldObject: O | undefined;
}

/** HTTP reason of a refusal: Forbidden answers 403, Invalid 422. */
export type ViolationReason = 'Invalid' | 'Forbidden';

/**
 * Which admission step refused: a ValidatingAdmissionPolicy and its binding (default: the policy's
 * name) or a webhook (its name in the ValidatingWebhookConfiguration).
 */
export type ViolationSource = { policy: string; binding?: string } | { webhook: string };

/**
 * A refusal: a field path as the API server prints it (`spec.podName`, `metadata.labels[k]`; '' for
 * the object) and a message, as a schema cause has them, plus who refused and how it answers.
 */
export interface Violation extends FieldCause {
  /** Set by the step that reports it; the API server's default is Invalid (422). */
  reason?: ViolationReason;
  /** Set by the step that reports it (a rule itself names only the field). */
  by?: ViolationSource;
}

export type Verdict =
  | { allowed: true; warnings: string[] }
  | { allowed: false; violations: Violation[]; warnings: string[] };

/** Who the controller is: the only identity allowed to write a claim's podName/nodeName/sourcePod. */
export interface ControllerIdentities {
  usernames: readonly string[];
  groups: readonly string[];
}

/** Which PodClaim references which pod: the webhook's watched cache, or the model's store. */
export interface PodClaimRef {
  namespace: string;
  name: string;
  uid?: string;
  podName?: string;
  sourcePod?: string;
}

export interface PodClaimIndex {
  /** Claims in `namespace` holding `pod` through spec.podName or spec.sourcePod (deleting ones hold none). */
  claimsReferencing(namespace: string, pod: string): PodClaimRef[];
  /** False until the cache has listed once; the webhook denies pod-reference checks until then. */
  synced(): boolean;
  /** When false the index is switched off on purpose; reference checks are skipped with a warning. */
  readonly enabled: boolean;
}

export interface RuleContext {
  controller: ControllerIdentities;
  index: PodClaimIndex;
}

export type Rule = (input: AdmissionRequest, ctx: RuleContext) => Verdict;

export function verdict(violations: Violation[], warnings: string[] = []): Verdict {
  return violations.length === 0 ? { allowed: true, warnings } : { allowed: false, violations, warnings };
}

export function isController(user: UserInfo, ids: ControllerIdentities): boolean {
  if (user.username !== undefined && ids.usernames.includes(user.username)) return true;
  return (user.groups ?? []).some((g) => ids.groups.includes(g));
}

const MAX_MESSAGE = 4000;

/** A denial's text as the webhook answers it (status.message): every violation with its field path. */
export function denialMessage(
  violations: readonly Violation[],
  target: { kind?: string | undefined; name?: string | undefined },
): string {
  const listed = violations.map((x) => (x.field ? `${x.field}: ${x.message}` : x.message));
  const message = `claimkit: ${target.kind ?? 'object'}${target.name ? ` ${JSON.stringify(target.name)}` : ''} denied: ${listed.join('; ')}`;
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message;
}
