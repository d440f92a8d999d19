// What a PodClaim reconcile may use. Apart from snapshot.ts: the safety rules' table names the
// claim's own rules (finalize, hold), so the snapshot those rules read must not import the table.
import type { Client, Reader } from '../../api/ports.ts';
import type { BindsInFlight } from '../../pool/binds-in-flight.ts';
import type { ClaimIndex } from '../../pool/claim-index.ts';
import type { EventRecorder } from '../apply.ts';
import type { SafetyRules } from '../safety-rules.ts';

export interface PodClaimDeps {
  cache: Reader;
  client: Client;
  now: () => number;
  recorder?: EventRecorder;
  /** The rules decisions apply (default SAFETY_RULES; a test may break one on purpose). */
  rules?: SafetyRules;
  /** The process's binds in flight: candidates they hold are left to them (absent: none kept). */
  bindsInFlight?: BindsInFlight;
  /**
   * The pool's waiting claims in order (the event router's claim index): a claim binds on its turn,
   * the k-th oldest waiting claim the k-th oldest free Idle pod (absent: each picks by its UID's hash).
   */
  waiting?: Pick<ClaimIndex, 'waitingAhead'>;
}
