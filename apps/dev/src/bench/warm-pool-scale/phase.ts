// What the measuring phases (steady, burst, raw writes) work with, once the pools are warm.
import type { BenchContext } from '../context.ts';
import type { ClaimSender } from './claims.ts';
import type { Controllers } from './controllers.ts';
import type { WarmPoolScaleOptions } from './options.ts';
import type { RunPlan } from './set-up.ts';
import type { PoolView } from './watches.ts';

export interface Phase {
  ctx: BenchContext;
  o: WarmPoolScaleOptions;
  run: RunPlan;
  view: PoolView;
  controllers: Controllers;
  sender: ClaimSender;
  /** The processes whose CPU is measured (settle.ts's cpuGroupsOf). */
  cpuGroups: Map<string, number[]>;
}
