// What a PodClaim reconcile may use. Apart from snapshot.ts: the safety rules' table names the
// claim's own rules (finalize, hold), so the snapshot those rules read must not import the table.
import type { Client, Reader } from '../../api/ports.ts';
import type { BindsInFlight } from '../../pool/binds-in-flight.ts';
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
}
