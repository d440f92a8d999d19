// `claimctl doctor`: pure checks over a plain snapshot of a namespace (or a cluster). Every
// finding has a stable code, a one-line explanation and the objects involved; the symptoms are
// those of seeds/capture-claim-dead-owner.md and seeds/pool-claim-finalize-scale-in.md.
import { bindingOf, podNameOf, sourcePodOf } from '../api/claim-binding.ts';
import { ANNOTATION_MIGRATE, FINALIZER_RELEASE, LABEL_POOL } from '../api/constants.ts';
import { keyString, parseTimestamp } from '../api/meta.ts';
import { isDeleting, isPodFinished } from '../api/pod-predicates.ts';
import type { Capture, Pod, PodClaim, PodClaimSet, PodPool } from '../api/types.ts';
import { isClaimLive } from '../capture/claim.ts';
import { classifyHolder } from '../capture/holder-liveness.ts';
import { unfencedResult } from '../capture/result-fence.ts';
import { chooseScaleIn, isMigrating } from '../claimset/scale-in.ts';
import { claimedBy, claimedByUid, stateOf } from '../pool/pods.ts';
import { sourceStateOf } from '../pool/source.ts';
import { currentTemplateHash, isUpdatedPod, podTemplateHash } from '../pool/template-hash.ts';
import { overCreatedPools } from './pool-size.ts';

export interface DoctorSnapshot {
  captures: Capture[];
  pools: PodPool[];
  claims: PodClaim[];
  claimSets: PodClaimSet[];
  /** Every pod of the namespace(s) examined (a live list: a pod not here is NotFound). */
  pods: Pod[];
  now: number;
}

export interface DoctorOptions {
  /** How long a deletion, a migration or a blocked scale-in may take before it counts as stuck. */
  stuckAfterMs?: number;
}

export const DEFAULT_STUCK_AFTER_MS = 5 * 60_000;

export const CHECKS = {
  CK001: { name: 'FinalizerStuck', fixable: true },
  CK002: { name: 'BoundToMissingPod', fixable: true },
  CK003: { name: 'LabelNamesMissingClaim', fixable: true },
  CK004: { name: 'LabelNotReferenced', fixable: true },
  CK005: { name: 'PodReferencedTwice', fixable: true },
  CK006: { name: 'CaptureHolderDead', fixable: true },
  CK007: { name: 'CaptureLeaseExpired', fixable: true },
  CK008: { name: 'MigrationStuck', fixable: true },
  CK009: { name: 'ScaleInBlocked', fixable: false },
  CK010: { name: 'ReferencedPodUnlabelled', fixable: true },
  CK011: { name: 'LeakedPod', fixable: true },
  CK012: { name: 'SelfMigration', fixable: true },
  CK013: { name: 'UnfencedResult', fixable: true },
  CK014: { name: 'PoolOverCreated', fixable: false },
  // Informational: nothing is wrong, a template rollout waits for claims to release their pods.
  CK015: { name: 'OutdatedPodAwaitingRelease', fixable: false, severity: 'Info' },
} as const;

/** Error findings fail `claimctl doctor`; Info findings are reported only. */
export type Severity = 'Error' | 'Info';

const severityOf = (code: DoctorCode): Severity => {
  const c = CHECKS[code] as { severity?: Severity };
  return c.severity ?? 'Error';
};

export type DoctorCode = keyof typeof CHECKS;

export interface Finding {
  code: DoctorCode;
  /** The check's name, e.g. FinalizerStuck. */
  name: string;
  namespace: string;
  /** One line: what is wrong and why it matters. */
  message: string;
  /** `Kind/namespace/name` of every object involved; the first is the subject. */
  objects: string[];
  /** Whether `planRepairs` has a repair for it (some only resolve once another finding is fixed). */
  fixable: boolean;
  /** Info findings describe work in progress (nothing to fix); they do not fail doctor. */
  severity: Severity;
}

const nsOf = (o: { metadata: { namespace?: string } }) => o.metadata.namespace ?? '';
export const objectId = (kind: string, o: { metadata: { namespace?: string; name: string } }): string =>
  `${kind}/${keyString({ namespace: nsOf(o), name: o.metadata.name })}`;
const podId = (ns: string, name: string) => `Pod/${keyString({ namespace: ns, name })}`;

function finding(
  code: DoctorCode,
  namespace: string,
  message: string,
  objects: string[],
  fixable: boolean = CHECKS[code].fixable,
): Finding {
  return { code, name: CHECKS[code].name, namespace, message, objects, fixable, severity: severityOf(code) };
}

function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  return `${Math.round(s / 3600)}h`;
}

/** Claims by `ns/pod` they reference through podName or sourcePod (deleting claims excluded). */
export function referencesByPod(
  claims: PodClaim[],
): Map<string, { claim: PodClaim; field: 'podName' | 'sourcePod' }[]> {
  const out = new Map<string, { claim: PodClaim; field: 'podName' | 'sourcePod' }[]>();
  for (const c of claims) {
    if (c.metadata.deletionTimestamp) continue;
    const b = bindingOf(c);
    for (const field of ['podName', 'sourcePod'] as const) {
      const name = b[field];
      if (!name) continue;
      if (field === 'sourcePod' && name === b.podName) continue;
      const k = keyString({ namespace: nsOf(c), name });
      out.set(k, [...(out.get(k) ?? []), { claim: c, field }]);
    }
  }
  return out;
}

/** When a migration started: the Ready condition's transition to Migrating, else the claim's creation. */
function migrationSince(c: PodClaim): number | undefined {
  const ready = (c.status?.conditions ?? []).find((x) => x.type === 'Ready' && x.reason === 'Migrating');
  return parseTimestamp(ready?.lastTransitionTime) ?? parseTimestamp(c.metadata.creationTimestamp);
}

/** What the pod checks need to know about the claims of the namespace(s). */
export interface ClaimContext {
  claims: Map<string, PodClaim>;
  refs: ReturnType<typeof referencesByPod>;
  /** `ns/pod` referenced by a deleting claim whose release finalizer has yet to run. */
  finalizing: Set<string>;
}

export function claimContext(claims: PodClaim[]): ClaimContext {
  const finalizing = new Set<string>();
  for (const c of claims) {
    if (!c.metadata.deletionTimestamp || !(c.metadata.finalizers ?? []).includes(FINALIZER_RELEASE)) continue;
    for (const name of [podNameOf(c), sourcePodOf(c)]) {
      if (name) finalizing.add(keyString({ namespace: nsOf(c), name }));
    }
  }
  return {
    claims: new Map(claims.map((c) => [keyString({ namespace: nsOf(c), name: c.metadata.name }), c])),
    refs: referencesByPod(claims),
    finalizing,
  };
}

/** The findings about one pod (CK003, CK004, CK005, CK010, CK011); `--fix` re-runs them on a live read. */
export function podFindings(p: Pod, ctx: ClaimContext): Finding[] {
  const out: Finding[] = [];
  const { claims, refs } = ctx;
  const ns = nsOf(p);
  const k = keyString({ namespace: ns, name: p.metadata.name });
  const id = objectId('Pod', p);
  const refsHere = refs.get(k) ?? [];
  // CK005: two claims reference one pod.
  if (refsHere.length > 1) {
    out.push(
      finding(
        'CK005',
        ns,
        `pod ${p.metadata.name} is referenced by ${refsHere.length} claims: ${refsHere
          .map((r) => `${r.claim.metadata.name}.${r.field}`)
          .join(', ')}`,
        [id, ...refsHere.map((r) => objectId('PodClaim', r.claim))],
      ),
    );
  }
  if (isDeleting(p)) return out;
  const label = claimedBy(p);
  if (label) {
    const owner = claims.get(keyString({ namespace: ns, name: label }));
    const uid = claimedByUid(p);
    if (!owner || (uid !== undefined && owner.metadata.uid !== uid)) {
      // CK003: the label names a claim that is gone (or a same-named successor).
      out.push(
        finding(
          'CK003',
          ns,
          owner
            ? `pod ${p.metadata.name} is labelled claimed-by=${label} with uid ${uid}, but ${label} now has uid ${owner.metadata.uid}`
            : `pod ${p.metadata.name} is labelled claimed-by=${label}, which does not exist`,
          [id, ...refsHere.map((r) => objectId('PodClaim', r.claim))],
        ),
      );
    } else if (
      !owner.metadata.deletionTimestamp &&
      podNameOf(owner) !== p.metadata.name &&
      sourcePodOf(owner) !== p.metadata.name
    ) {
      // CK004: the named claim exists but does not reference the pod.
      out.push(
        finding(
          'CK004',
          ns,
          `pod ${p.metadata.name} is labelled claimed-by=${label}, but ${label} references ${podNameOf(owner) || '(no pod)'}`,
          [id, objectId('PodClaim', owner), ...refsHere.map((r) => objectId('PodClaim', r.claim))],
        ),
      );
    }
  } else if (refsHere.length === 0) {
    // CK011: Bound or Draining, but no claim holds it: nothing would ever release it (P7). A
    // deleting claim that references it still releases it in its finalizer (CK001 if stuck).
    const state = stateOf(p);
    const pool = p.metadata.labels?.[LABEL_POOL];
    if (pool && (state === 'Bound' || state === 'Draining') && !ctx.finalizing.has(k)) {
      out.push(
        finding(
          'CK011',
          ns,
          `pod ${p.metadata.name} of pool ${pool} is ${state} with no claimed-by label, and no claim references it; nothing will release it`,
          [id],
        ),
      );
    }
  } else if (refsHere.length === 1 && refsHere[0]!.field === 'podName') {
    // CK010: the pod of exactly one claim, but not labelled for it.
    const r = refsHere[0]!;
    out.push(
      finding(
        'CK010',
        ns,
        `pod ${p.metadata.name} is referenced by ${r.claim.metadata.name}.${r.field} but has no claimed-by label`,
        [id, objectId('PodClaim', r.claim)],
      ),
    );
  }
  return out;
}

/**
 * The snapshot cut into one per namespace. Every check looks within one namespace (a claim's pod, a
 * pool's pods, a set's claims, a capture's holder), so diagnosing each part finds what diagnosing the
 * whole does; the parts let a caller pause between namespaces (the controller's periodic doctor on
 * the event loop) and keep per-pool scans to their own namespace's pods.
 */
export function byNamespace(s: DoctorSnapshot): DoctorSnapshot[] {
  const parts = new Map<string, DoctorSnapshot>();
  const part = (o: { metadata: { namespace?: string } }) => {
    const ns = nsOf(o);
    let p = parts.get(ns);
    if (!p) {
      p = { captures: [], pools: [], claims: [], claimSets: [], pods: [], now: s.now };
      parts.set(ns, p);
    }
    return p;
  };
  for (const o of s.captures) part(o).captures.push(o);
  for (const o of s.pools) part(o).pools.push(o);
  for (const o of s.claims) part(o).claims.push(o);
  for (const o of s.claimSets) part(o).claimSets.push(o);
  for (const o of s.pods) part(o).pods.push(o);
  return [...parts.values()];
}

export function diagnose(s: DoctorSnapshot, opts: DoctorOptions = {}): Finding[] {
  const stuckAfter = opts.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS;
  const out: Finding[] = [];
  const pods = new Map(s.pods.map((p) => [keyString({ namespace: nsOf(p), name: p.metadata.name }), p]));
  const ctx = claimContext(s.claims);

  for (const c of s.claims) {
    const ns = nsOf(c);
    const id = objectId('PodClaim', c);
    // CK001: a deleting claim whose release finalizer has not completed.
    if (c.metadata.deletionTimestamp && (c.metadata.finalizers ?? []).includes(FINALIZER_RELEASE)) {
      const since = parseTimestamp(c.metadata.deletionTimestamp) ?? s.now;
      if (s.now - since >= stuckAfter) {
        const involved = [podNameOf(c), sourcePodOf(c)].filter((x): x is string => Boolean(x));
        out.push(
          finding(
            'CK001',
            ns,
            `claim ${c.metadata.name} has been deleting for ${age(s.now - since)}; its release finalizer did not complete`,
            [id, ...involved.map((p) => podId(ns, p))],
          ),
        );
      }
      continue;
    }
    if (c.metadata.deletionTimestamp) continue;
    // CK002: Bound (or anything) to a pod that is gone, or finished (phase Succeeded or Failed: its
    // containers exited for good and it never runs again, as good as gone).
    const podName = podNameOf(c);
    const sourcePod = sourcePodOf(c);
    if (podName) {
      const pod = pods.get(keyString({ namespace: ns, name: podName }));
      if (pod && isPodFinished(pod) && !isDeleting(pod)) {
        out.push(
          finding(
            'CK002',
            ns,
            `claim ${c.metadata.name} is ${c.status?.phase ?? 'Pending'} with podName ${podName}, which has finished (phase ${pod.status?.phase}); it should be Lost with podName and nodeName cleared, and the pod deleted`,
            [id, podId(ns, podName)],
          ),
        );
      } else if (!pod) {
        out.push(
          finding(
            'CK002',
            ns,
            `claim ${c.metadata.name} is ${c.status?.phase ?? 'Pending'} with podName ${podName}, which does not exist; it should be Lost with podName and nodeName cleared`,
            [id, podId(ns, podName)],
          ),
        );
      }
    }
    // CK012: a "migration" from the claim's own pod. Finishing it would release the pod the claim
    // keeps, so it is reported at once and never as CK008.
    if (sourcePod && sourcePod === podName) {
      out.push(
        finding(
          'CK012',
          ns,
          `claim ${c.metadata.name} has sourcePod = podName = ${podName}; finishing that migration would release the claim's own pod`,
          [id, podId(ns, podName)],
        ),
      );
    } else if (sourcePod) {
      // CK008: a migration in flight (or requested and pending) past the threshold.
      const since = migrationSince(c) ?? s.now;
      if (s.now - since >= stuckAfter) {
        out.push(
          finding(
            'CK008',
            ns,
            `claim ${c.metadata.name} has been migrating from ${sourcePod} to ${podName || '(none)'} for ${age(s.now - since)}`,
            [id, podId(ns, sourcePod), ...(podName ? [podId(ns, podName)] : [])],
          ),
        );
      }
    } else if (c.metadata.annotations?.[ANNOTATION_MIGRATE] !== undefined) {
      const cond = (c.status?.conditions ?? []).find((x) => x.type === 'Migrating' && x.status === 'False');
      const since = parseTimestamp(cond?.lastTransitionTime);
      if (cond && since !== undefined && s.now - since >= stuckAfter) {
        out.push(
          finding(
            'CK008',
            ns,
            `claim ${c.metadata.name} asked to migrate ${age(s.now - since)} ago and has not started: ${cond.message}`,
            [id],
            false,
          ),
        );
      }
    }
  }

  for (const p of s.pods) out.push(...podFindings(p, ctx));

  for (const c of s.captures) {
    if (c.metadata.deletionTimestamp) continue;
    const ns = nsOf(c);
    const id = objectId('Capture', c);
    // CK013: a result no fenced terminal write could have produced (capture/result-fence.ts).
    const unfenced = c.status?.result && unfencedResult(c.status);
    if (unfenced) {
      out.push(
        finding(
          'CK013',
          ns,
          `capture ${c.metadata.name} is ${c.status?.phase ?? 'Pending'} with result ${c.status?.result?.ref}, which is unfenced: ${unfenced}`,
          [
            id,
            ...(c.status?.result?.capturedFrom.name ? [podId(ns, c.status.result.capturedFrom.name)] : []),
          ],
        ),
      );
    }
    const claim = c.status?.claim;
    if (!claim) continue;
    const holderId = podId(ns, claim.holder.name);
    if (!isClaimLive(claim, s.now)) {
      out.push(
        finding(
          'CK007',
          ns,
          `capture ${c.metadata.name} is held by ${claim.holder.name} (token ${claim.token}) on a lease that expired ${age(s.now - (parseTimestamp(claim.renewTime) ?? 0) - claim.leaseSeconds * 1000)} ago`,
          [id, holderId],
        ),
      );
      continue;
    }
    const pod = pods.get(keyString({ namespace: ns, name: claim.holder.name }));
    const liveness = classifyHolder(claim.holder, pod ? { found: true, pod } : { found: false });
    if (liveness.state === 'dead') {
      out.push(
        finding(
          'CK006',
          ns,
          `capture ${c.metadata.name} is held by ${claim.holder.name} (token ${claim.token}), which is dead (${liveness.reason}); new pods stand down until the lease expires`,
          [id, holderId],
        ),
      );
    }
  }

  for (const set of s.claimSets) {
    if (set.metadata.deletionTimestamp) continue;
    const ns = nsOf(set);
    const active = s.claims.filter(
      (c) =>
        nsOf(c) === ns &&
        !c.metadata.deletionTimestamp &&
        (c.metadata.ownerReferences ?? []).some(
          (r) => r.kind === 'PodClaimSet' && r.uid === set.metadata.uid,
        ),
    );
    const excess = active.length - set.spec.replicas;
    if (excess <= 0) continue;
    const { blocked } = chooseScaleIn(active, excess);
    if (blocked === 0) continue;
    const cond = (set.status?.conditions ?? []).find(
      (x) => x.type === 'ScaleInBlocked' && x.status === 'True',
    );
    const since = parseTimestamp(cond?.lastTransitionTime);
    if (since !== undefined && s.now - since < stuckAfter) continue;
    const migrating = active.filter(isMigrating);
    out.push(
      finding(
        'CK009',
        ns,
        `claim set ${set.metadata.name} wants ${set.spec.replicas} claims, has ${active.length}; ${blocked} cannot be removed while migrating (${migrating
          .map((c) => c.metadata.name)
          .join(', ')})${since !== undefined ? ` for ${age(s.now - since)}` : ''}`,
        [objectId('PodClaimSet', set), ...migrating.map((c) => objectId('PodClaim', c))],
      ),
    );
  }

  out.push(...outdatedBoundPods(s));

  // CK014: more pods than maxPods, or more Idle than the target, beyond what may be in flight.
  for (const o of overCreatedPools(s.pools, s.pods, s.claims, s.now)) {
    out.push(
      finding('CK014', nsOf(o.pool), o.message, [
        objectId('PodPool', o.pool),
        ...o.pods.map((p) => objectId('Pod', p)),
      ]),
    );
  }

  return out.sort(
    (a, b) => a.code.localeCompare(b.code) || (a.objects[0] ?? '').localeCompare(b.objects[0] ?? ''),
  );
}

/**
 * CK015: Bound or Draining pods of an outdated pool template. They stay with their claims (a
 * rollout never takes a claimed pod) and are deleted, not recycled, when released.
 */
function outdatedBoundPods(s: DoctorSnapshot): Finding[] {
  const out: Finding[] = [];
  const pools = new Map(s.pools.map((p) => [keyString({ namespace: nsOf(p), name: p.metadata.name }), p]));
  for (const p of s.pods) {
    const state = stateOf(p);
    if ((state !== 'Bound' && state !== 'Draining') || isDeleting(p)) continue;
    const pool = pools.get(keyString({ namespace: nsOf(p), name: p.metadata.labels?.[LABEL_POOL] ?? '' }));
    if (!pool || pool.metadata.deletionTimestamp) continue;
    // A pool seeded from a Capture (spec.source) judges its pods only against a fenced seed.
    const current = currentTemplateHash(pool, sourceStateOf(pool, s.captures));
    if (current === undefined || isUpdatedPod(p, current)) continue;
    const claim = claimedBy(p);
    out.push(
      finding(
        'CK015',
        nsOf(p),
        `pod ${p.metadata.name} (${state}) is of an outdated template of pool ${pool.metadata.name} (${
          podTemplateHash(p) ?? 'no hash'
        }, current ${current}); it is deleted, not recycled, when ${claim ? `claim ${claim}` : 'its claim'} releases it`,
        [
          podId(nsOf(p), p.metadata.name),
          objectId('PodPool', pool),
          ...(claim ? [`PodClaim/${keyString({ namespace: nsOf(p), name: claim })}`] : []),
        ],
      ),
    );
  }
  return out;
}
