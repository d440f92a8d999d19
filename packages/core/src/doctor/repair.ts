// Repairs for doctor findings, as core Decisions: every pod and claim write carries the
// resourceVersion (and UID) it was decided from, so a repair planned from a stale snapshot fails
// with Conflict instead of overwriting anything; the runner re-reads and plans again.
// The repairs reuse core's own transitions: finalize (decidePodClaim on a deleting claim), the
// capture takeover/close (decideCapture), the pool's release and unlabel writes. A pod is never
// relabelled from one claim to another in one write: the label is removed, and the claim that
// references the pod labels it in a later round (CK010).
// A repair of a pod's labels (CK003, CK004, CK010, CK011) is confirmed by the runner just before it
// is written: a live read of the pod, then of the claims, must still show the same finding, so a
// pod is never released for a claim that started to reference it after the snapshot was taken.

import { bindingOf, hasLegacyBinding, podNameOf, sourcePodOf } from '../api/claim-binding.ts';
import { ANNOTATION_MIGRATE, ANNOTATION_MIGRATE_TO } from '../api/constants.ts';
import type { Decision, Write } from '../api/decision.ts';
import { event, writeTarget } from '../api/decision.ts';
import { deepEqual } from '../api/json.ts';
import { keyOf, keyString, type ObjectKey, parseTimestamp, toTimestamp } from '../api/meta.ts';
import { isPodFinished } from '../api/pod-predicates.ts';
import type { Capture, Pod, PodClaim, PodClaimPhase, PodClaimStatus, PodPool } from '../api/types.ts';
import {
  claimedBy,
  isClaimedBy,
  labelOwnedPodWrite,
  poolOf,
  releasePodWrite,
  unlabelPodWrite,
} from '../pool/pods.ts';
import { sourceStateOf } from '../pool/source.ts';
import { type PodRelease, poolRelease } from '../pool/template-hash.ts';
import { decideCapture, decideDiscardUnfencedResult } from '../reconcile/capture/index.ts';
import { bindingWrite, statusPatch } from '../reconcile/podclaim/claim-writes.ts';
import { decidePodClaim } from '../reconcile/podclaim/index.ts';
import { type DoctorSnapshot, type Finding, referencesByPod } from './checks.ts';

export interface Repair {
  finding: Finding;
  decision: Decision;
  /** `Kind/namespace/name` of every object the decision writes. */
  touches: string[];
  /** Write only if a live read of this pod (at this resourceVersion), then of the claims, still shows the finding. */
  confirm?: { pod: ObjectKey; resourceVersion: string };
}

export interface RepairPlan {
  repairs: Repair[];
  /** Fixable findings left for the next round because an earlier repair writes the same object. */
  deferred: Finding[];
  /** Findings with no repair (not fixable, or nothing to write from this snapshot). */
  unfixable: Finding[];
}

const nsOf = (o: { metadata: { namespace?: string } }) => o.metadata.namespace ?? '';

function targetString(w: Write): string {
  const { kind, key } = writeTarget(w);
  return `${kind}/${keyString(key)}`;
}

class Index {
  readonly s: DoctorSnapshot;
  readonly byId = new Map<string, Capture | Pod | PodClaim>();
  readonly refs: ReturnType<typeof referencesByPod>;
  constructor(s: DoctorSnapshot) {
    this.s = s;
    for (const c of s.captures) this.byId.set(`Capture/${keyString(keyOf(c))}`, c);
    for (const p of s.pods) this.byId.set(`Pod/${keyString(keyOf(p))}`, p);
    for (const c of s.claims) this.byId.set(`PodClaim/${keyString(keyOf(c))}`, c);
    this.refs = referencesByPod(s.claims);
  }
  pool(ns: string, name: string | undefined): PodPool | undefined {
    return this.s.pools.find((p) => nsOf(p) === ns && p.metadata.name === name);
  }
  /** The release the pool applies (its policy; pods of an outdated template are deleted). */
  policy(ns: string, pool: string | undefined): PodRelease {
    const p = this.pool(ns, pool);
    return poolRelease(p, p && sourceStateOf(p, this.s.captures));
  }
  pod(ns: string, name: string | undefined): Pod | undefined {
    return name ? (this.byId.get(`Pod/${keyString({ namespace: ns, name })}`) as Pod | undefined) : undefined;
  }
  refsTo(ns: string, pod: string) {
    return this.refs.get(keyString({ namespace: ns, name: pod })) ?? [];
  }
}

/** The claim's status with `phase` and a Ready condition to match, as the controller writes it. */
function claimStatusWrite(
  c: PodClaim,
  status: PodClaimStatus,
  now: number,
  message: string,
  why: string,
): Write {
  return { ...statusPatch(c, status, now, message), why };
}

/** P2: clear podName/nodeName and mark Lost (the controller binds again when an Idle pod exists). */
function loseClaim(c: PodClaim, now: number, why: string): Write[] {
  const b = bindingOf(c);
  const status = claimStatusWrite(
    c,
    { phase: 'Lost', lostTime: toTimestamp(now) },
    now,
    why,
    'doctor: phase Lost',
  );
  return [bindingWrite(c, b.sourcePod ? { sourcePod: b.sourcePod } : {}, `doctor: ${why}`, status)];
}

/** Stop referencing the migration source (and drop the request), then release it if it is ours. */
function finishMigration(ix: Index, c: PodClaim, now: number, why: string): Write[] {
  const ns = nsOf(c);
  const b = bindingOf(c);
  const phase: PodClaimPhase = b.podName && c.status?.phase !== 'Lost' ? 'Bound' : 'Lost';
  const status = claimStatusWrite(
    c,
    { phase },
    now,
    phase === 'Bound' ? `bound to ${b.podName}` : 'pod lost',
    `doctor: phase ${phase}`,
  );
  // The request goes with the finished migration, fenced on the claim's UID: the binding write is
  // the CAS, and a request left behind would start a new migration.
  const writes: Write[] = [
    bindingWrite(c, { ...b, sourcePod: undefined }, `doctor: ${why}`, status),
    {
      op: 'patch',
      kind: 'PodClaim',
      key: keyOf(c),
      patch: { metadata: { annotations: { [ANNOTATION_MIGRATE]: null, [ANNOTATION_MIGRATE_TO]: null } } },
      precondition: { uid: c.metadata.uid! },
      why: `doctor: ${why}: drop the request`,
    },
  ];
  const src = ix.pod(ns, sourcePodOf(c));
  // sourcePod == podName: the source is the claim's own pod, which it keeps (P7).
  if (src && isClaimedBy(src, c) && src.metadata.name !== podNameOf(c)) {
    const other = ix.refsTo(ns, src.metadata.name).find((r) => r.claim.metadata.uid !== c.metadata.uid);
    writes.push(
      other
        ? unlabelPodWrite(
            src,
            `doctor: ${src.metadata.name} belongs to ${other.claim.metadata.name}; drop our label`,
          )
        : releasePodWrite(
            src,
            ix.policy(ns, c.spec.poolName),
            `doctor: release migration source ${src.metadata.name}`,
          ),
    );
  }
  return writes;
}

/** The keeper of a doubly referenced pod: the claim its label names, else the oldest claim. */
function keeperOf(pod: Pod, refs: { claim: PodClaim }[]): PodClaim {
  const labelled = refs.find((r) => isClaimedBy(pod, r.claim) && claimedBy(pod) !== undefined);
  if (labelled) return labelled.claim;
  return [...refs]
    .map((r) => r.claim)
    .sort((a, b) => {
      const ta = parseTimestamp(a.metadata.creationTimestamp) ?? 0;
      const tb = parseTimestamp(b.metadata.creationTimestamp) ?? 0;
      return ta !== tb ? ta - tb : a.metadata.name < b.metadata.name ? -1 : 1;
    })[0]!;
}

function repairFor(ix: Index, f: Finding): Decision | undefined {
  const s = ix.s;
  const subject = ix.byId.get(f.objects[0] ?? '');
  const ns = f.namespace;
  switch (f.code) {
    case 'CK001': {
      // Core's finalize: release our pods, drop our label from a pod another claim holds, then
      // remove the finalizer (P3).
      const c = subject as PodClaim | undefined;
      if (!c) return undefined;
      const d = decidePodClaim({
        claim: c,
        pool: ix.pool(ns, c.spec.poolName),
        pods: s.pods.filter((p) => nsOf(p) === ns),
        claims: s.claims.filter((x) => nsOf(x) === ns),
        now: s.now,
      });
      return { writes: d.writes.map((w) => ({ ...w, why: `doctor: ${w.why}` })), events: d.events };
    }
    case 'CK002': {
      const c = subject as PodClaim | undefined;
      // A claim an earlier release stored is the controller's to move first (legacy-binding.ts).
      if (!c || hasLegacyBinding(c)) return undefined;
      const pod = ix.pod(ns, podNameOf(c));
      const why =
        pod && isPodFinished(pod)
          ? `pod ${podNameOf(c)} has finished (phase ${pod.status?.phase})`
          : `pod ${podNameOf(c)} is gone`;
      return {
        writes: loseClaim(c, s.now, why),
        events: [event(c, 'Warning', 'Lost', `claimctl doctor: ${why}; claim is Lost and will bind again`)],
      };
    }
    case 'CK003':
    case 'CK004': {
      const p = subject as Pod | undefined;
      if (!p) return undefined;
      const label = claimedBy(p);
      // Another claim references the pod: only the residue label goes (never relabel A->B).
      const ref = ix.refsTo(ns, p.metadata.name)[0];
      const w = ref
        ? unlabelPodWrite(
            p,
            `doctor: drop residue label claimed-by=${label}; ${ref.claim.metadata.name} references the pod`,
          )
        : releasePodWrite(
            p,
            ix.policy(ns, poolOf(p)),
            `doctor: release ${p.metadata.name} (residue label claimed-by=${label})`,
          );
      return { writes: [w], events: [] };
    }
    case 'CK005': {
      const p = subject as Pod | undefined;
      if (!p) return undefined;
      const refs = ix.refsTo(ns, p.metadata.name);
      const keeper = keeperOf(p, refs);
      const writes: Write[] = [];
      const seen = new Set<string>();
      for (const r of refs) {
        const c = r.claim;
        if (c.metadata.uid === keeper.metadata.uid || seen.has(c.metadata.uid ?? c.metadata.name)) continue;
        if (hasLegacyBinding(c)) continue;
        seen.add(c.metadata.uid ?? c.metadata.name);
        const why = `pod ${p.metadata.name} stays with ${keeper.metadata.name}`;
        if (r.field === 'podName') writes.push(...loseClaim(c, s.now, why));
        else writes.push(...finishMigration(ix, c, s.now, `${why}: stop referencing it as migration source`));
      }
      return writes.length ? { writes, events: [] } : undefined;
    }
    case 'CK006':
    case 'CK007': {
      // Core's capture transitions: take over for a Ready candidate, or close the dead claim.
      const c = subject as Capture | undefined;
      const claim = c?.status?.claim;
      if (!c || !claim) return undefined;
      const holder = ix.pod(ns, claim.holder.name);
      const d = decideCapture({
        capture: c,
        pods: s.pods.filter((p) => nsOf(p) === ns),
        holder: holder ? { found: true, pod: holder } : { found: false },
        now: s.now,
      });
      const writes = d.writes
        .filter(
          (w) =>
            w.op === 'updateStatus' &&
            !deepEqual((w.object as Capture).status?.claim, claim) &&
            (w.object as Capture).status?.claim?.token !== claim.token,
        )
        .map((w) => ({ ...w, why: `doctor: ${w.why}` }));
      return writes.length ? { writes, events: d.events } : undefined;
    }
    case 'CK008': {
      const c = subject as PodClaim | undefined;
      if (!c || !sourcePodOf(c) || !f.fixable || hasLegacyBinding(c)) return undefined;
      return {
        writes: finishMigration(ix, c, s.now, `finish stuck migration from ${sourcePodOf(c)}`),
        events: [
          event(
            c,
            'Warning',
            'Migrated',
            `claimctl doctor finished the stuck migration from ${sourcePodOf(c)}`,
            { migration: podNameOf(c) ? 'success' : 'lost', pool: c.spec.poolName },
          ),
        ],
      };
    }
    case 'CK011': {
      // P7: a pod no claim holds goes back per its pool's policy (the runner confirms it live first).
      const p = subject as Pod | undefined;
      if (!p) return undefined;
      return {
        writes: [
          releasePodWrite(
            p,
            ix.policy(ns, poolOf(p)),
            `doctor: release leaked pod ${p.metadata.name} (no claim references it)`,
          ),
        ],
        events: [],
      };
    }
    case 'CK012': {
      // Only sourcePod goes: the pod is the claim's own and stays Bound and labelled for it.
      const c = subject as PodClaim | undefined;
      if (!c || !sourcePodOf(c) || sourcePodOf(c) !== podNameOf(c) || hasLegacyBinding(c)) return undefined;
      const phase: PodClaimPhase = c.status?.phase === 'Lost' ? 'Lost' : 'Bound';
      const status = claimStatusWrite(
        c,
        { phase },
        s.now,
        phase === 'Bound' ? `bound to ${podNameOf(c)}` : 'pod lost',
        `doctor: phase ${phase}`,
      );
      return {
        writes: [
          bindingWrite(
            c,
            { ...bindingOf(c), sourcePod: undefined },
            `doctor: clear sourcePod ${sourcePodOf(c)}, which is the claim's own podName`,
            status,
          ),
        ],
        events: [
          event(
            c,
            'Warning',
            'SelfMigrationCleared',
            `claimctl doctor cleared sourcePod ${sourcePodOf(c)} (= podName); the pod stays with the claim`,
          ),
        ],
      };
    }
    case 'CK013': {
      const c = subject as Capture | undefined;
      if (!c) return undefined;
      const d = decideDiscardUnfencedResult(c, s.now, 'claimctl doctor');
      return d.writes.length
        ? { writes: d.writes.map((w) => ({ ...w, why: `doctor: ${w.why}` })), events: d.events }
        : undefined;
    }
    case 'CK010': {
      const p = subject as Pod | undefined;
      const r = p ? ix.refsTo(ns, p.metadata.name) : [];
      if (!p || r.length !== 1) return undefined;
      return { writes: [labelOwnedPodWrite(p, r[0]!.claim)], events: [] };
    }
    case 'CK009':
    case 'CK014':
      return undefined;
  }
}

/** Findings whose subject is a pod and whose repair writes that pod's labels. */
const POD_REPAIRS: ReadonlySet<string> = new Set(['CK003', 'CK004', 'CK010', 'CK011']);

/**
 * One round of repairs from one snapshot. Two repairs never write the same object in a round (the
 * later one is deferred), so every precondition was read from the snapshot it is applied against.
 */
export function planRepairs(s: DoctorSnapshot, findings: Finding[]): RepairPlan {
  const ix = new Index(s);
  const plan: RepairPlan = { repairs: [], deferred: [], unfixable: [] };
  const touched = new Set<string>();
  for (const f of findings) {
    const decision = f.fixable ? repairFor(ix, f) : undefined;
    if (!decision || decision.writes.length === 0) {
      plan.unfixable.push(f);
      continue;
    }
    const touches = [...new Set(decision.writes.map(targetString))];
    if (touches.some((t) => touched.has(t))) {
      plan.deferred.push(f);
      continue;
    }
    for (const t of touches) touched.add(t);
    const pod = POD_REPAIRS.has(f.code) ? ix.byId.get(f.objects[0] ?? '') : undefined;
    plan.repairs.push({
      finding: f,
      decision,
      touches,
      ...(pod ? { confirm: { pod: keyOf(pod), resourceVersion: pod.metadata.resourceVersion ?? '' } } : {}),
    });
  }
  return plan;
}
