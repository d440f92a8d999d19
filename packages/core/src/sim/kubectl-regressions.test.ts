// Named regressions for the three failures of issue 10, each forced by a person with kubectl on a
// cluster without admission (no CEL rules, no policies, no webhook), in the simulator's world with
// two controller replicas. Seeds 1, 2 and 4 give the pool releasePolicy Delete (drain 3 s),
// Recycle (no drain) and Recycle (drain 3 s).
import { describe, expect, test } from 'vitest';
import { keyOf, toTimestamp } from '../api/meta.ts';
import type { Pod, PodClaim } from '../api/types.ts';
import { runDoctor } from '../doctor/run.ts';
import { claimedBy, stateOf } from '../pool/pods.ts';
import { KUBECTL_USER } from './kubectl-actor.ts';
import {
  formatViolations,
  openWorld,
  quietViolations,
  reconcileNow,
  settle,
  type World,
} from './simulator.ts';

const NS = 'sim';
const SEEDS = [1, 2, 4];
const ADMIN = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
const key = (name: string) => ({ namespace: NS, name });

/** A world whose controllers have bound every claim (solo-0 and the set's two). */
async function boundWorld(seed: number): Promise<World> {
  const w = await openWorld(seed, { kubectl: { admission: 'off' } });
  await settle(w);
  return w;
}

const doctor = (w: World, fix: boolean, stuckAfterMs?: number) =>
  runDoctor(w.model.as(ADMIN), {
    namespace: NS,
    now: () => w.clock.now(),
    fix,
    ...(stuckAfterMs !== undefined ? { stuckAfterMs } : {}),
  });

/** Every change of `pod` that takes it from `claim` (another state, another label, deletion). */
function watchTakenFrom(w: World, pod: string, claim: string): string[] {
  const seen: string[] = [];
  w.model.watch(
    'Pod',
    {},
    {
      onEvent: (e) => {
        const p = e.object as Pod;
        if (p.metadata.name !== pod) return;
        if (
          e.type === 'DELETED' ||
          p.metadata.deletionTimestamp ||
          stateOf(p) !== 'Bound' ||
          claimedBy(p) !== claim
        ) {
          seen.push(`${e.type} state=${stateOf(p)} claimed-by=${claimedBy(p) ?? '(none)'}`);
        }
      },
    },
  );
  return seen;
}

describe('(1) seed B literal state: B.podName = X, X claimed-by=A (Bound), A deleted with its finalizer pending', () => {
  for (const seed of SEEDS) {
    for (const order of ['point, then delete A', 'delete A, then point'] as const) {
      for (const b of ['a new claim', 'a claim bound elsewhere'] as const) {
        for (const first of ['in queue order', 'B reconciled first'] as const) {
          test(`seed ${seed}, ${order}, B ${b}, ${first}: B keeps X, no pod leaks`, async () => {
            const w = await boundWorld(seed);
            const kubectl = w.model.as(KUBECTL_USER);
            const a = w.model.getNow('PodClaim', key('solo-0'));
            const x = a.status!.podName!;
            let bName: string;
            if (b === 'a new claim') {
              bName = 'b';
              await kubectl.create({
                apiVersion: 'claimkit.dev/v1alpha1',
                kind: 'PodClaim',
                metadata: { name: bName, namespace: NS },
                spec: { poolName: 'web' },
              } as PodClaim);
            } else {
              bName = w.model
                .listNow('PodClaim', { namespace: NS })
                .find((c) => c.metadata.name !== 'solo-0')!.metadata.name;
            }
            const point = () =>
              kubectl.patchStatus('PodClaim', key(bName), { status: { podName: x, podUID: null } });
            const deleteA = () => kubectl.delete('PodClaim', keyOf(a));
            if (order === 'point, then delete A') {
              await point();
              await deleteA();
            } else {
              await deleteA();
              await point();
            }
            // The seed's state, before any controller acts on it.
            const forcedPod = w.model.getNow('Pod', key(x));
            expect([
              w.model.getNow('PodClaim', key(bName)).status?.podName,
              claimedBy(forcedPod),
              stateOf(forcedPod),
              Boolean(w.model.getNow('PodClaim', key('solo-0')).metadata.deletionTimestamp),
            ]).toEqual([x, 'solo-0', 'Bound', true]);

            // As on the cluster of the report: B's reconcile sees X labelled for A before A's finalizer ran.
            if (first === 'B reconciled first') {
              await reconcileNow(w, 0, 'PodClaim', bName);
              await reconcileNow(w, 0, 'PodClaim', bName);
            }
            await settle(w);
            const claimB = w.model.getNow('PodClaim', key(bName));
            const podX = w.model.tryGetNow('Pod', key(x));
            expect({
              aGone: w.model.tryGetNow('PodClaim', key('solo-0')) === undefined,
              bPodName: claimB.status?.podName,
              bPhase: claimB.status?.phase,
              xClaimedBy: podX && claimedBy(podX),
              xState: podX && stateOf(podX),
            }).toEqual({ aGone: true, bPodName: x, bPhase: 'Bound', xClaimedBy: bName, xState: 'Bound' });
            expect(formatViolations(quietViolations(w))).toBe('');
          });
        }
      }
    }
  }
});

describe('(2) a stale-token result written without admission', () => {
  for (const seed of SEEDS) {
    test(`seed ${seed}: doctor finds the unfenced result; --fix discards it and the capture runs again`, async () => {
      const w = await openWorld(seed, { kubectl: { admission: 'off' } });
      // Every capture job fails: each attempt takes a new token, until the capture is Failed.
      w.agent.nextFate = 'fail';
      await settle(w);
      const failed = w.model.getNow('Capture', key('cap-http')).status!;
      expect([failed.phase, failed.epoch, failed.claim]).toEqual(['Failed', 3, undefined]);

      // kubectl patch capture cap-http --subresource=status --type=merge: result.token 1, epoch 3, claim closed.
      const worker = w.model.getNow('Pod', key('worker-0'));
      await w.model.as(KUBECTL_USER).patchStatus('Capture', key('cap-http'), {
        status: {
          phase: 'Captured',
          result: {
            ref: 'snapshot://typed-by-hand',
            token: 1,
            capturedFrom: { name: 'worker-0', uid: worker.metadata.uid },
            completionTime: toTimestamp(w.clock.now()),
          },
        },
      });
      w.agent.nextFate = 'succeed';
      await settle(w);

      const { findings } = await doctor(w, false);
      const named = findings
        .filter((f) => f.objects[0] === 'Capture/sim/cap-http')
        .map((f) => `${f.code} ${f.name}`);
      expect(
        named.some((n) => n.endsWith(' UnfencedResult')),
        `doctor found: ${named.join('; ') || 'nothing'}`,
      ).toBe(true);
      await doctor(w, true);
      await settle(w);
      const after = w.model.getNow('Capture', key('cap-http')).status!;
      expect(after.phase).toBe('Captured');
      expect(after.result?.token).toBe(after.epoch);
      expect(after.epoch).toBeGreaterThan(3);
      expect(after.result?.ref).toBe(`snapshot://cap-http/${after.epoch}`);
      expect(formatViolations(quietViolations(w))).toBe('');
      expect((await doctor(w, false)).findings.filter((f) => f.fixable)).toEqual([]);
    });
  }
});

describe('(3) sourcePod == podName written without admission', () => {
  for (const seed of SEEDS) {
    test(`seed ${seed}: the controllers clear sourcePod and never release the claim's own pod`, async () => {
      const w = await boundWorld(seed);
      const x = w.model.getNow('PodClaim', key('solo-0')).status!.podName!;
      const taken = watchTakenFrom(w, x, 'solo-0');
      await w.model.as(KUBECTL_USER).patchStatus('PodClaim', key('solo-0'), { status: { sourcePod: x } });
      await settle(w);
      expect(taken).toEqual([]);
      const c = w.model.getNow('PodClaim', key('solo-0'));
      expect([c.status?.podName, c.status?.sourcePod ?? '']).toEqual([x, '']);
      expect(formatViolations(quietViolations(w))).toBe('');
    });

    test(`seed ${seed}: doctor reports it at once with its own code; --fix clears sourcePod and keeps the pod`, async () => {
      const w = await boundWorld(seed);
      const x = w.model.getNow('PodClaim', key('solo-0')).status!.podName!;
      const taken = watchTakenFrom(w, x, 'solo-0');
      await w.model.as(KUBECTL_USER).patchStatus('PodClaim', key('solo-0'), { status: { sourcePod: x } });
      // Controllers not running; doctor with its default --stuck-after, right after the write.
      const { findings } = await doctor(w, false);
      const named = findings
        .filter((f) => f.objects[0] === 'PodClaim/sim/solo-0')
        .map((f) => `${f.code} ${f.name}`);
      expect(
        named.some((n) => n.endsWith(' SelfMigration')),
        `doctor found: ${named.join('; ') || 'nothing'}`,
      ).toBe(true);
      await doctor(w, true);
      expect(taken).toEqual([]);
      const c = w.model.getNow('PodClaim', key('solo-0'));
      expect([c.status?.podName, c.status?.sourcePod ?? '']).toEqual([x, '']);
      await settle(w);
      expect(taken).toEqual([]);
      expect(formatViolations(quietViolations(w))).toBe('');
    });
  }
});
