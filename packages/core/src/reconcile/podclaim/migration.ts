// Migration: start (CAS the target, then sourcePod=old, podName=target), drain the source, stop
// referencing it, release it. Every step resumable; sourcePod == podName is repaired, not run.
import { ANNOTATION_MIGRATE, ANNOTATION_MIGRATE_TO } from '../../api/constants.ts';
import { type Decision, event, type Write } from '../../api/decision.ts';
import { parseTimestamp } from '../../api/meta.ts';
import { isDeleting, isPodFinished } from '../../api/pod-predicates.ts';
import type { Pod, PodClaim, PodClaimPhase, PodClaimStatus, ReleasePolicy } from '../../api/types.ts';
import type { ClaimIndex } from '../../pool/claim-index.ts';
import { podAddress } from '../../pool/pod-address.ts';
import {
  ANNOTATION_DRAINING_SINCE,
  claimedBy,
  drainPodWrite,
  isClaimedBy,
  stateOf,
} from '../../pool/pods.ts';
import type { PodRelease } from '../../pool/template-hash.ts';
import type { SafetyRules } from '../safety-rules.ts';
import { generationAfter, statusPatch, withPodUid, withSpec } from './claim-writes.ts';
import type { PodClaimSnapshot } from './snapshot.ts';

export function startMigration(
  c: PodClaim,
  source: Pod | undefined,
  target: Pod,
  podWrites: Write[],
  now: number,
): Decision {
  const spec = {
    ...c.spec,
    sourcePod: c.spec.podName ?? '',
    podName: target.metadata.name,
    nodeName: target.spec.nodeName ?? '',
  };
  const status: PodClaimStatus = {
    ...c.status,
    phase: 'Migrating',
    migrations: (c.status?.migrations ?? 0) + 1,
    // The claim's pod is the target from this write on: so is its address.
    address: podAddress(target) ?? null,
  };
  return {
    writes: [
      ...podWrites,
      {
        op: 'update',
        object: withSpec(withPodUid(c, target), spec),
        why: `migrate ${spec.sourcePod} -> ${target.metadata.name}`,
      },
      statusPatch(c, status, now, undefined, generationAfter(c, spec)),
    ],
    events: [
      event(
        c,
        'Normal',
        'MigrationStarted',
        `migrating from ${source?.metadata.name ?? spec.sourcePod} to ${target.metadata.name} (${c.metadata.annotations?.[ANNOTATION_MIGRATE] ?? ''})`,
      ),
    ],
    requeueAfterMs: 0,
  };
}

/**
 * P7: sourcePod == podName (a legacy writer, or CEL off) is no migration at all. Clearing sourcePod
 * is the whole repair: "finishing" it would release the claim's own pod.
 */
export function repairSelfMigration(c: PodClaim): Decision {
  const msg = `sourcePod and podName both name ${c.spec.podName}: cleared sourcePod; the claim keeps its pod`;
  return {
    writes: [
      {
        op: 'update',
        object: { ...c, spec: { ...c.spec, sourcePod: '' } },
        why: `clear self-referencing sourcePod ${c.spec.sourcePod}`,
      },
    ],
    events: [event(c, 'Warning', 'SelfMigrationRepaired', msg)],
    requeueAfterMs: 0,
  };
}

export function continueMigration(
  s: PodClaimSnapshot,
  index: ClaimIndex,
  byName: Map<string, Pod>,
  policy: PodRelease | ReleasePolicy,
  rules: Pick<SafetyRules, 'releasePodWrite'>,
): Decision {
  const c = s.claim;
  const ns = c.metadata.namespace ?? '';
  const src = byName.get(c.spec.sourcePod!);
  const drainMs = (s.pool?.spec.drainSeconds ?? 0) * 1000;
  // A finished source serves nobody: no drain, it is released (deleted) at once.
  if (src && isClaimedBy(src, c) && !isDeleting(src) && !isPodFinished(src)) {
    if (stateOf(src) !== 'Draining' && drainMs > 0) {
      return { writes: [drainPodWrite(src, s.now)], events: [], requeueAfterMs: drainMs };
    }
    const since = parseTimestamp(src.metadata.annotations?.[ANNOTATION_DRAINING_SINCE]) ?? s.now - drainMs;
    if (s.now < since + drainMs) return { writes: [], events: [], requeueAfterMs: since + drainMs - s.now };
  }
  // Stop referencing the source first, then release it: a released pod is never still referenced.
  const annotations = { ...(c.metadata.annotations ?? {}) };
  delete annotations[ANNOTATION_MIGRATE];
  delete annotations[ANNOTATION_MIGRATE_TO];
  const next: PodClaim = {
    ...c,
    metadata: { ...c.metadata, annotations },
    spec: { ...c.spec, sourcePod: '' },
  };
  const writes: Write[] = [{ op: 'update', object: next, why: `finish migration from ${c.spec.sourcePod}` }];
  // The source is ours to release when labelled ours, or unlabelled and still Bound/Draining (a
  // deleting claim's finalizer dropped only its own label): otherwise it would leak (P7).
  const srcOurs =
    src &&
    (isClaimedBy(src, c) || (claimedBy(src) === undefined && stateOf(src) !== 'Idle')) &&
    !index.otherReference(ns, src.metadata.name, c);
  if (src && srcOurs)
    writes.push(rules.releasePodWrite(src, policy, `release migration source ${src.metadata.name}`));
  const phase: PodClaimPhase = c.spec.podName ? 'Bound' : 'Lost';
  writes.push(statusPatch(c, { ...c.status, phase }, s.now, undefined, generationAfter(c, next.spec)));
  return {
    writes,
    events: [
      event(
        c,
        'Normal',
        'Migrated',
        `migration from ${c.spec.sourcePod} to ${c.spec.podName || '(lost)'} finished`,
        { migration: c.spec.podName ? 'success' : 'lost', pool: c.spec.poolName },
      ),
    ],
    requeueAfterMs: 0,
  };
}
