// Migration: start (CAS the target, then one status write: sourcePod=old, podName=target), drain the
// source, drop the request, stop referencing the source, release it. Every step resumable; sourcePod == podName is repaired, not run.
import { bindingOf, podNameOf } from '../../api/claim-binding.ts';
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
import { bindingTo, bindingWrite, statusPatch } from './claim-writes.ts';
import type { PodClaimSnapshot } from './snapshot.ts';

export function startMigration(
  c: PodClaim,
  source: Pod | undefined,
  target: Pod,
  podWrites: Write[],
  now: number,
): Decision {
  const from = podNameOf(c) ?? '';
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
      bindingWrite(
        c,
        bindingTo(target, from),
        `migrate ${from} -> ${target.metadata.name}`,
        statusPatch(c, status, now),
      ),
    ],
    events: [
      event(
        c,
        'Normal',
        'MigrationStarted',
        `migrating from ${source?.metadata.name ?? from} to ${target.metadata.name} (${c.metadata.annotations?.[ANNOTATION_MIGRATE] ?? ''})`,
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
  const b = bindingOf(c);
  const msg = `sourcePod and podName both name ${b.podName}: cleared sourcePod; the claim keeps its pod`;
  return {
    writes: [
      bindingWrite(c, { ...b, sourcePod: undefined }, `clear self-referencing sourcePod ${b.sourcePod}`),
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
  const b = bindingOf(c);
  const src = byName.get(b.sourcePod!);
  const drainMs = (s.pool?.spec.drainSeconds ?? 0) * 1000;
  // A finished source serves nobody: no drain, it is released (deleted) at once.
  if (src && isClaimedBy(src, c) && !isDeleting(src) && !isPodFinished(src)) {
    if (stateOf(src) !== 'Draining' && drainMs > 0) {
      return { writes: [drainPodWrite(src, s.now)], events: [], requeueAfterMs: drainMs };
    }
    const since = parseTimestamp(src.metadata.annotations?.[ANNOTATION_DRAINING_SINCE]) ?? s.now - drainMs;
    if (s.now < since + drainMs) return { writes: [], events: [], requeueAfterMs: since + drainMs - s.now };
  }
  // The request goes first (a write of its own): once sourcePod is cleared, a request still on the
  // claim would start a new migration.
  const annotations = { ...(c.metadata.annotations ?? {}) };
  delete annotations[ANNOTATION_MIGRATE];
  delete annotations[ANNOTATION_MIGRATE_TO];
  if (Object.keys(annotations).length !== Object.keys(c.metadata.annotations ?? {}).length) {
    const next: PodClaim = { ...c, metadata: { ...c.metadata, annotations } };
    return {
      writes: [{ op: 'update', object: next, why: `migration from ${b.sourcePod} done: drop the request` }],
      events: [],
      requeueAfterMs: 0,
    };
  }
  // Stop referencing the source first, then release it: a released pod is never still referenced.
  const phase: PodClaimPhase = b.podName ? 'Bound' : 'Lost';
  const writes: Write[] = [
    bindingWrite(
      c,
      { ...b, sourcePod: undefined },
      `finish migration from ${b.sourcePod}`,
      statusPatch(c, { ...c.status, phase }, s.now),
    ),
  ];
  // The source is ours to release when labelled ours, or unlabelled and still Bound/Draining (a
  // deleting claim's finalizer dropped only its own label): otherwise it would leak (P7).
  const srcOurs =
    src &&
    (isClaimedBy(src, c) || (claimedBy(src) === undefined && stateOf(src) !== 'Idle')) &&
    !index.otherReference(ns, src.metadata.name, c);
  if (src && srcOurs)
    writes.push(rules.releasePodWrite(src, policy, `release migration source ${src.metadata.name}`));
  return {
    writes,
    events: [
      event(c, 'Normal', 'Migrated', `migration from ${b.sourcePod} to ${b.podName || '(lost)'} finished`, {
        migration: b.podName ? 'success' : 'lost',
        pool: c.spec.poolName,
      }),
    ],
    requeueAfterMs: 0,
  };
}
