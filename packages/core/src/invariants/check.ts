// The invariants of DESIGN.md as checkers over plain data, for core tests, the simulator, e2e and
// `claimctl doctor`. Safety invariants hold after every single write; convergence invariants hold
// once the controllers are quiet (every queue drained, no faults) — they describe where the
// system must end up, e.g. a Bound claim whose pod was just deleted is fine until reconciled.
import { podNameOf, sourcePodOf } from '../api/claim-binding.ts';
import { keyString } from '../api/meta.ts';
import { isPodFinished } from '../api/pod-predicates.ts';
import type { Capture, Pod, PodClaim } from '../api/types.ts';
import { captureCandidates } from '../capture/candidates.ts';
import { isClaimLive } from '../capture/claim.ts';
import { classifyHolder } from '../capture/holder-liveness.ts';
import { isLostForGood } from '../pool/lost-policy.ts';
import { claimedBy, isIdleAndReady } from '../pool/pods.ts';

/**
 * C*, P*: DESIGN.md's invariants; M1, M2, L1: the claim side of pools (claim-side.ts); S1: only a
 * fenced Capture result seeds a pool's pods (PodPool spec.source; checked by the tracker). A list as
 * well as a type, so the index of the rules (rules/) can be checked against it.
 */
export const INVARIANT_IDS = [
  'C1',
  'C2',
  'P1',
  'P2',
  'P3',
  'P4',
  'P5',
  'P6',
  'P7',
  'P8',
  'M1',
  'M2',
  'L1',
  'S1',
] as const;
export type InvariantId = (typeof INVARIANT_IDS)[number];

export interface Violation {
  invariant: InvariantId;
  message: string;
  objects: string[];
}

export interface ClusterState {
  captures: Capture[];
  pods: Pod[];
  claims: PodClaim[];
}

const ns = (o: { metadata: { namespace?: string } }) => o.metadata.namespace ?? '';
const id = (kind: string, o: { metadata: { namespace?: string; name: string } }) =>
  `${kind}/${keyString({ namespace: ns(o), name: o.metadata.name })}`;

/** Invariants that must hold after every write. */
export function checkSafety(s: ClusterState): Violation[] {
  const out: Violation[] = [];
  for (const c of s.captures) {
    const st = c.status ?? {};
    if (st.claim && st.claim.token !== st.epoch) {
      out.push({
        invariant: 'C1',
        message: `claim token ${st.claim.token} is not the epoch ${st.epoch}`,
        objects: [id('Capture', c)],
      });
    }
    if (st.result && st.result.token > (st.epoch ?? 0)) {
      out.push({
        invariant: 'C1',
        message: `result token ${st.result.token} was never issued (epoch ${st.epoch})`,
        objects: [id('Capture', c)],
      });
    }
  }
  // P1: one non-deleting claim per pod, and a referenced pod's label never names another claim.
  const refs = new Map<string, PodClaim[]>();
  for (const c of s.claims) {
    if (c.metadata.deletionTimestamp) continue;
    for (const pod of new Set([podNameOf(c), sourcePodOf(c)])) {
      if (!pod) continue;
      const k = keyString({ namespace: ns(c), name: pod });
      refs.set(k, [...(refs.get(k) ?? []), c]);
    }
  }
  const pods = new Map(s.pods.map((p) => [keyString({ namespace: ns(p), name: p.metadata.name }), p]));
  for (const [k, cs] of refs) {
    if (cs.length > 1) {
      out.push({
        invariant: 'P1',
        message: `pod ${k} is referenced by ${cs.length} claims: ${cs.map((c) => c.metadata.name).join(', ')}`,
        objects: [`Pod/${k}`, ...cs.map((c) => id('PodClaim', c))],
      });
    }
    const pod = pods.get(k);
    const label = pod && claimedBy(pod);
    if (
      pod &&
      label &&
      cs.length === 1 &&
      label !== cs[0]!.metadata.name &&
      !pod.metadata.deletionTimestamp
    ) {
      out.push({
        invariant: 'P1',
        message: `pod ${k} is referenced by ${cs[0]!.metadata.name} but labelled claimed-by=${label}`,
        objects: [`Pod/${k}`, id('PodClaim', cs[0]!)],
      });
    }
  }
  return out;
}

/** Invariants that must hold once every controller is quiet. */
export function checkConvergence(s: ClusterState, now: number): Violation[] {
  const out: Violation[] = [];
  const pods = new Map(s.pods.map((p) => [keyString({ namespace: ns(p), name: p.metadata.name }), p]));
  const claims = new Map(s.claims.map((c) => [keyString({ namespace: ns(c), name: c.metadata.name }), c]));
  // C2: no live claim held by a dead holder while a Ready candidate exists.
  for (const c of s.captures) {
    const claim = c.status?.claim;
    if (!claim || !isClaimLive(claim, now)) continue;
    const pod = pods.get(keyString({ namespace: ns(c), name: claim.holder.name }));
    const liveness = classifyHolder(claim.holder, pod ? { found: true, pod } : { found: false });
    if (liveness.state === 'dead' && captureCandidates(c, s.pods, claim.holder).length > 0) {
      out.push({
        invariant: 'C2',
        message: `capture is held by dead holder ${claim.holder.name} (${liveness.reason}) while a Ready candidate exists`,
        objects: [id('Capture', c)],
      });
    }
  }
  for (const c of s.claims) {
    // P3: finalizers complete.
    if (c.metadata.deletionTimestamp) {
      out.push({
        invariant: 'P3',
        message: 'claim is still deleting: its finalizer did not complete',
        objects: [id('PodClaim', c)],
      });
      continue;
    }
    // P2: never Bound to a pod that is gone (or finished: it never runs again); Lost clears
    // podName/nodeName.
    const podName = podNameOf(c);
    if (podName) {
      const pod = pods.get(keyString({ namespace: ns(c), name: podName }));
      if (!pod || pod.metadata.deletionTimestamp || isPodFinished(pod)) {
        out.push({
          invariant: 'P2',
          message: `claim references pod ${podNameOf(c)}, which is ${pod && !pod.metadata.deletionTimestamp ? `finished (phase ${pod.status?.phase})` : 'gone'}`,
          objects: [id('PodClaim', c)],
        });
      }
    }
    if (c.status?.phase === 'Lost' && (podNameOf(c) || c.spec.nodeName)) {
      out.push({
        invariant: 'P2',
        message: 'Lost claim still has podName/nodeName',
        objects: [id('PodClaim', c)],
      });
    }
    // lostPolicy Fail: a Lost claim rightly stays Lost beside Idle pods.
    if (!podNameOf(c) && !isLostForGood(c)) {
      const idle = s.pods.some(
        (p) =>
          ns(p) === ns(c) &&
          p.metadata.labels?.['claimkit.dev/pool'] === c.spec.poolName &&
          isIdleAndReady(p),
      );
      if (idle) {
        out.push({
          invariant: 'P2',
          message: `claim is ${c.status?.phase ?? 'Pending'} while an Idle pod exists`,
          objects: [id('PodClaim', c)],
        });
      }
    }
  }
  // P5: no residue.
  for (const p of s.pods) {
    const owner = claimedBy(p);
    if (!owner || p.metadata.deletionTimestamp) continue;
    const c = claims.get(keyString({ namespace: ns(p), name: owner }));
    if (!c || (podNameOf(c) !== p.metadata.name && sourcePodOf(c) !== p.metadata.name)) {
      out.push({
        invariant: 'P5',
        message: c
          ? `pod is labelled for ${owner}, which does not reference it`
          : `pod is labelled for missing claim ${owner}`,
        objects: [id('Pod', p), ...(c ? [id('PodClaim', c)] : [])],
      });
    }
  }
  out.push(...checkNoLeakedPods(s));
  return [...checkSafety(s), ...out];
}

/** P7: every Bound/Draining pool pod is referenced by a live (non-deleting) claim. */
export function checkNoLeakedPods(s: ClusterState): Violation[] {
  const referenced = new Set<string>();
  for (const c of s.claims) {
    if (c.metadata.deletionTimestamp) continue;
    for (const pod of [podNameOf(c), sourcePodOf(c)])
      if (pod) referenced.add(keyString({ namespace: ns(c), name: pod }));
  }
  const out: Violation[] = [];
  for (const p of s.pods) {
    const state = p.metadata.labels?.['claimkit.dev/state'];
    if (!p.metadata.labels?.['claimkit.dev/pool'] || p.metadata.deletionTimestamp) continue;
    if (state !== 'Bound' && state !== 'Draining') continue;
    if (referenced.has(keyString({ namespace: ns(p), name: p.metadata.name }))) continue;
    out.push({
      invariant: 'P7',
      message: `pod is ${state}${claimedBy(p) ? ` (claimed-by ${claimedBy(p)})` : ' with no claimed-by label'} but no live claim references it: leaked`,
      objects: [id('Pod', p)],
    });
  }
  return out;
}
