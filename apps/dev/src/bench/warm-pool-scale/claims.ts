// The claims the steady and burst phases create: claim i goes to pool i (round-robin), its send
// time recorded beside what the watches see; a failed create is kept, not thrown.
import { FINALIZER_RELEASE, type PodClaim } from '@claimkit/core';
import type { BenchContext } from '../context.ts';
import type { RunPlan } from './set-up.ts';
import type { ClaimTimes, PoolView } from './watches.ts';

export interface ClaimSender {
  /** Creates claim `name` in pool i's namespace (known to the view as `ns/name`). */
  create(name: string, i: number): Promise<unknown>;
  /** `name: message` of each create that failed. */
  errors: string[];
}

export function claimSender(ctx: BenchContext, run: RunPlan, view: PoolView): ClaimSender {
  const errors: string[] = [];
  return {
    errors,
    create: (name, i) => {
      const namespace = run.nsOf(i);
      const t: ClaimTimes = view.claims.get(`${namespace}/${name}`) ?? {};
      view.claims.set(`${namespace}/${name}`, t);
      t.sentAt = performance.now();
      return ctx.kube
        .create({
          apiVersion: 'claimkit.dev/v1alpha1',
          kind: 'PodClaim',
          // With the release finalizer, as claimkit's clients create claims (claimPod, claimctl): the
          // controller then writes nothing before the bind, which is two writes.
          metadata: { name, namespace, finalizers: [FINALIZER_RELEASE] },
          spec: { poolName: run.poolOf(i).name },
        } as PodClaim)
        .catch((e) => {
          errors.push(`${name}: ${(e as Error).message}`);
        });
    },
  };
}
