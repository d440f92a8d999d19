// Quiet periods: faults off, caches caught up, every queue drained (time advancing as the requeues
// ask); and the view of the world a repair point (admission off) works on.
import { ADMIN, NS, runKubelets } from './cluster.ts';
import type { RepairWorld } from './repair-point.ts';
import type { World } from './world.ts';

/** What the repair point needs of the world: doctor runs as an administrator. */
export function repairWorld(w: World): RepairWorld {
  return {
    doctorClient: w.model.as(ADMIN),
    namespace: NS,
    now: () => w.clock.now(),
    state: () => w.state(),
    quiesce: () => quiesce(w),
    historyViolations: () => w.newAgentViolations(),
  };
}

/** Faults off, caches caught up, every queue drained (time advanced as timers ask). */
export async function quiesce(w: World): Promise<void> {
  w.model.faults.clear();
  w.agent.down = false;
  if (w.agent.nextFate === 'hang') w.agent.nextFate = 'succeed';
  for (const ctl of w.ctls) {
    w.caughtUp(ctl);
    ctl.lagReads = 0;
  }
  const horizon = w.clock.now() + 120_000;
  for (let i = 0; i < 5000; i++) {
    await runKubelets(w.model);
    let worked = false;
    for (let c = 0; c < w.ctls.length; c++) {
      while (await w.reconcileNext(c)) {
        worked = true;
        if (++i > 5000) break;
      }
    }
    if (worked) continue;
    const due = w.nextDue();
    if (due === Infinity || due > horizon) break;
    w.clock.set(Math.max(w.clock.now(), due));
  }
}
