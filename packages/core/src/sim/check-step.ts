// What a run reports after each action: the transitions the world recorded, safety after every
// step (suspended while a legacy writer's or the kubectl actor's damage awaits repair), and
// convergence, quiet-state or repair-point verdicts after every quiet period.

import type { PodPool } from '../api/types.ts';
import { checkConvergence, checkSafety } from '../invariants/check.ts';
import { checkClaimSide, checkHeldPodHints } from '../invariants/claim-side.ts';
import { checkPoolRollout } from '../invariants/pool-rollout.ts';
import { checkPoolExcessIdle, checkPoolSizes } from '../invariants/pool-size.ts';
import type { Action } from './actions.ts';
import { simPodMetadataResidue } from './cluster.ts';
import { quietStateViolations, repairFailures, type SimViolation } from './repair-point.ts';
import type { World } from './world.ts';

export async function checkStep(w: World, a: Action): Promise<SimViolation[]> {
  const out: SimViolation[] = [...w.violations];
  w.violations.length = 0;
  // Transitions the actor's damage caused (its own writes, and what others then did) are the
  // repair point's to judge, not the tracker's; except P7 (a claim giving up a pod nobody else
  // references) and S1 (a pod seeded from a result that was never fenced), which judge only the
  // controllers' decisions (the tracker skips external writers): an unfenced result the actor wrote
  // must still never seed a pod.
  for (const v of w.tracker.violations) {
    if (!w.damaged || v.invariant === 'P7' || v.invariant === 'S1') out.push(v);
    else w.count('kubectl.transitionsSuspended');
  }
  w.tracker.violations.length = 0;
  const state = w.state();
  // P8 (pool-size.ts): after every write with one replica; with several, once they are quiet, no
  // Idle pod is left above maxPods (an excess claims bound goes as they release).
  const pools = w.model.peek('PodPool') as PodPool[];
  const oversized = checkPoolSizes(pools, state.pods);
  if (w.ctls.length === 1) out.push(...oversized);
  else if (a.t === 'quiesce') out.push(...checkPoolExcessIdle(pools, state.pods));
  else if (oversized.length > 0) w.count('pool.transientExcess');
  if (a.t === 'quiesce') {
    if (w.admission === 'off') {
      out.push(...repairFailures(w.repairs[w.repairs.length - 1]!));
      w.damaged = false;
    } else if (w.admission === 'on') {
      out.push(...quietStateViolations(state, w.clock.now()), ...w.newAgentViolations());
    } else {
      out.push(
        ...checkConvergence(state, w.clock.now()),
        ...checkHeldPodHints(state),
        ...simPodMetadataResidue(state.pods),
        ...w.newAgentViolations(),
      );
    }
    // Every rollout (a template change by a person) has restored the warm buffer by now.
    out.push(...checkPoolRollout(pools, state.pods, state.captures));
    w.corrupted = false;
  } else if (w.damaged) {
    // Admission off and damage landed: safety is suspended until the next repair point.
  } else if (!w.corrupted) {
    out.push(...checkSafety(state), ...checkClaimSide(state));
  } else {
    out.push(...checkSafety(state).filter((v) => v.invariant !== 'P1'));
  }
  return out;
}
