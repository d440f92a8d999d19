// Applying one action to the world: faults reach only the code under test (controllers and capture
// holders), writes are attributed to whoever makes them, and the people, kubelets, legacy writers and
// the kubectl actor do what the action says.
import { podNameOf, sourcePodOf } from '../api/claim-binding.ts';
import { ANNOTATION_SHARD, LABEL_POOL } from '../api/constants.ts';
import { isApiError } from '../api/errors.ts';
import { keyOf, type ObjectKey } from '../api/meta.ts';
import { isPodFinished } from '../api/pod-predicates.ts';
import { ClaimSuperseded } from '../capture/claim.ts';
import { acquireCapture, completeCapture, failCapture, renewCapture } from '../capture/holder-ops.ts';
import { claimedBy } from '../pool/pods.ts';
import type { Action } from './actions.ts';
import { createCapture, createWorker, NS, PERSON, runKubelets, WORKER_SA } from './cluster.ts';
import { applyKubectlWrite } from './kubectl-actor.ts';
import { quiesce, repairWorld } from './quiesce.ts';
import { repairPoint } from './repair-point.ts';
import type { World } from './world.ts';

export async function apply(w: World, a: Action): Promise<void> {
  // Faults hit controllers and capture holders; the simulated users and kubelets are not under test.
  const underTest = a.t === 'reconcile' || a.t === 'reconcileCrash' || a.t === 'holder' || a.t === 'sweep';
  w.model.faults.suspended = !underTest;
  w.current = a.t;
  // Writers that bypass core: what they break is theirs, not a controller's transition (P7).
  w.tracker.externalWriter = a.t === 'adversary' || a.t === 'stripLabel' || a.t === 'kubectl';
  try {
    await applyAction(w, a);
  } finally {
    w.model.faults.suspended = false;
    w.current = undefined;
    w.tracker.externalWriter = false;
  }
}

async function applyAction(w: World, a: Action): Promise<void> {
  const m = w.model;
  const nth = <T>(xs: T[], i: number): T | undefined => (xs.length === 0 ? undefined : xs[i % xs.length]);
  const swallow = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      if (!isApiError(e) && !(e instanceof ClaimSuperseded)) throw e;
    }
  };
  w.count(`action.${a.t}`);
  switch (a.t) {
    case 'reconcile':
      await w.reconcileNext(a.ctl);
      return;
    case 'reconcileCrash':
      await w.reconcileNext(a.ctl, a.after);
      return;
    case 'tick':
      w.clock.advance(a.ms);
      return;
    case 'kubelet':
      await runKubelets(m);
      return;
    case 'deletePod': {
      const pods = m
        .listNow('Pod', { namespace: NS })
        .filter((p) => (a.pool ? p.metadata.labels?.[LABEL_POOL] : p.metadata.labels?.app === 'worker'));
      const p = nth(pods, a.i);
      if (p) await swallow(w.person().delete('Pod', keyOf(p)));
      return;
    }
    case 'replaceWorker': {
      const key = { namespace: NS, name: `worker-${a.i}` };
      const cur = m.tryGetNow('Pod', key);
      if (cur) await swallow(m.delete('Pod', key, { gracePeriodSeconds: 0 }));
      if (!m.tryGetNow('Pod', key)) await createWorker(m, a.i);
      return;
    }
    case 'migrate': {
      const claims = m
        .listNow('PodClaim', { namespace: NS })
        .filter((c) => podNameOf(c) && !c.metadata.deletionTimestamp);
      const c = nth(claims, a.i);
      if (!c) return;
      const annotations: Record<string, string> = { 'claimkit.dev/migrate': 'sim' };
      if (a.to) {
        const idle = m
          .listNow('Pod', { namespace: NS, labelSelector: 'claimkit.dev/state=Idle' })
          .filter((p) => !claimedBy(p));
        const t = nth(idle, a.i);
        if (t) annotations['claimkit.dev/migrate-to'] = t.metadata.name;
      }
      await swallow(w.person().patch('PodClaim', keyOf(c), { metadata: { annotations } }));
      return;
    }
    case 'scaleSet':
      await swallow(
        w.person().patch('PodClaimSet', { namespace: NS, name: 'set' }, { spec: { replicas: a.replicas } }),
      );
      return;
    case 'rollout':
      // A JSON merge patch replaces the containers list: the template hash changes with the tag.
      await swallow(
        w
          .person()
          .patch(
            'PodPool',
            { namespace: NS, name: 'web' },
            { spec: { template: { spec: { containers: [{ name: 'main', image: `web:${a.image}` }] } } } },
          ),
      );
      return;
    case 'scalePool':
      await swallow(w.model.updateScale('PodPool', { namespace: NS, name: 'web' }, a.minIdle, {}, PERSON));
      return;
    case 'createClaim':
      await w.createClaim();
      return;
    case 'deleteClaim': {
      const solo = m
        .listNow('PodClaim', { namespace: NS })
        .filter((c) => !(c.metadata.ownerReferences ?? []).length);
      const c = nth(solo, a.i);
      if (c) await swallow(w.person().delete('PodClaim', keyOf(c)));
      return;
    }
    case 'fault':
      m.faults.inject({
        verbs: [a.verb],
        kinds: [a.kind],
        reason: a.reason,
        times: a.times,
        appliedBeforeError: a.applied,
      });
      return;
    case 'lag': {
      const ctl = w.ctls[a.ctl % w.ctls.length]!;
      ctl.cache.sync();
      ctl.cache.lag = a.lag;
      ctl.lagReads = a.reads;
      return;
    }
    case 'restart':
      w.restart(a.ctl);
      return;
    case 'sweep':
      await w.sweep(a.ctl);
      return;
    case 'resync':
      w.enqueueAll(w.ctls[a.ctl % w.ctls.length]!);
      return;
    case 'holder': {
      const name = `worker-${a.i}`;
      const pod = m.tryGetNow('Pod', { namespace: NS, name });
      const key: ObjectKey = { namespace: NS, name: 'cap-ext' };
      if (!pod || !m.tryGetNow('Capture', key)) return;
      const now = () => w.clock.now();
      const belief = w.beliefs.get(pod.metadata.uid ?? '');
      const holder = m.as(WORKER_SA);
      try {
        if (a.op === 'acquire') {
          const { outcome, capture } = await acquireCapture(
            holder,
            key,
            { name, uid: pod.metadata.uid ?? '' },
            now,
            w.rules,
          );
          if (outcome.kind !== 'held' && outcome.kind !== 'closed') {
            w.beliefs.set(pod.metadata.uid ?? '', capture.status?.claim?.token ?? 0);
          }
        } else if (belief !== undefined) {
          if (a.op === 'complete')
            await completeCapture(holder, key, belief, `ref-${name}-${belief}`, now, w.rules);
          else if (a.op === 'fail') await failCapture(holder, key, belief, 'holder failed');
          else await renewCapture(holder, key, belief, now);
          if (a.op !== 'renew') w.beliefs.delete(pod.metadata.uid ?? '');
        }
      } catch (e) {
        if (e instanceof ClaimSuperseded) {
          w.count('superseded');
          w.beliefs.delete(pod.metadata.uid ?? '');
        } else if (!isApiError(e)) throw e;
      }
      return;
    }
    case 'agent':
      w.agent.nextFate = a.fate;
      w.agent.down = a.down;
      return;
    case 'resetCapture': {
      const key = { namespace: NS, name: a.http ? 'cap-http' : 'cap-ext' };
      const c = m.tryGetNow('Capture', key);
      if (c && (c.status?.phase === 'Captured' || c.status?.phase === 'Failed')) {
        await swallow(m.delete('Capture', key));
        await swallow(createCapture(m, a.http));
      }
      return;
    }
    case 'adversary': {
      // A legacy writer (the seed's buggy operator) points claim i at the pod claim j holds.
      const claims = m.listNow('PodClaim', { namespace: NS }).filter((c) => !c.metadata.deletionTimestamp);
      const ci = nth(claims, a.i);
      const cj = nth(claims, a.j);
      if (!ci || !cj || ci === cj || !podNameOf(cj) || sourcePodOf(cj) || sourcePodOf(ci)) return;
      if (ci.metadata.name === cj.metadata.name) return;
      w.corrupted = true;
      await swallow(
        m.patchStatus('PodClaim', keyOf(ci), { status: { podName: podNameOf(cj) ?? null, podUID: null } }),
      );
      // ...and then the claim holding it is deleted, as in the seed's story (a user deletes it here;
      // scale-in of a set never picks a migrating claim, which the tracker checks separately).
      if (a.i % 2 === 0 && !cj.metadata.ownerReferences?.length)
        await swallow(m.delete('PodClaim', keyOf(cj)));
      return;
    }
    case 'finishPod': {
      const pods = m
        .listNow('Pod', { namespace: NS })
        .filter((p) => p.metadata.labels?.[LABEL_POOL] && !p.metadata.deletionTimestamp && !isPodFinished(p));
      const p = nth(pods, a.i);
      if (p) {
        const exitCode = a.phase === 'Succeeded' ? 0 : 1;
        m.setPodStatusNow(keyOf(p), {
          phase: a.phase,
          conditions: [{ type: 'Ready', status: 'False', reason: 'PodCompleted' }],
          containerStatuses: [{ name: 'main', restartCount: 0, state: { terminated: { exitCode } } }],
        });
      }
      return;
    }
    case 'pinPool': {
      // An operator's plain merge patch, no precondition (kubectl annotate).
      await swallow(
        m.patch(
          'PodPool',
          { namespace: NS, name: a.pool },
          {
            metadata: { annotations: { [ANNOTATION_SHARD]: a.pin === null ? null : String(a.pin) } },
          },
        ),
      );
      return;
    }
    case 'stripLabel': {
      // A legacy writer (the seed's reclaimCN) removes the claimed-by label of a bound pod, and the
      // pod may then be deleted: its events must still reach the claim through spec.podName (P6).
      const claims = m
        .listNow('PodClaim', { namespace: NS })
        .filter((c) => podNameOf(c) && !c.metadata.deletionTimestamp);
      const c = nth(claims, a.i);
      if (!c) return;
      const key = { namespace: NS, name: podNameOf(c)! };
      await swallow(m.patch('Pod', key, { metadata: { labels: { 'claimkit.dev/claimed-by': null } } }));
      if (a.deletePod) await swallow(m.delete('Pod', key));
      return;
    }
    case 'kubectl': {
      const r = await applyKubectlWrite(m, NS, a.w);
      w.stats[`kubectl.${a.w.op}.accepted`] = (w.stats[`kubectl.${a.w.op}.accepted`] ?? 0) + r.accepted;
      w.stats[`kubectl.${a.w.op}.refused`] = (w.stats[`kubectl.${a.w.op}.refused`] ?? 0) + r.refused;
      return;
    }
    case 'quiesce':
      if (w.admission === 'off') w.repairs.push(await repairPoint(repairWorld(w)));
      else await quiesce(w);
      return;
  }
}
