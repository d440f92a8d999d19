// Test-only switches that break one rule each, so tests can prove the simulator and the invariant
// checkers catch that rule being broken. Production code paths never set these. Routing bugs (P6) are
// not switches: tests pass a broken mapEvent (sim/broken-routing.ts) to the simulator as data.
export type BrokenRule =
  | 'C1-unfenced-result'
  | 'C2-takeover-unknown'
  | 'P1-bind-without-cas'
  | 'P2-lost-keeps-pod'
  | 'P3-finalize-skips-shared-pod'
  | 'P4-scale-in-picks-migrating'
  | 'P5-finalize-leaves-label'
  | 'P7-foreign-label-takes-pod';

export const brokenRules = new Set<BrokenRule>();

export function isBroken(rule: BrokenRule): boolean {
  return brokenRules.size > 0 && brokenRules.has(rule);
}
