// Which PodClaim references which pod (its binding's podName or sourcePod), from a watched cache: core's
// ClaimIndex, the one the controller and the simulator use, fed with claims parsed defensively from
// the API's JSON. The webhook's Node entry feeds it from an informer on PodClaims (its
// serve-claim-index.ts); tests feed it directly. The webhook asks it whether a podName is already
// held by another claim, so it asks core's holding view: a deleting claim holds no pod against a
// live claim (a finalizer in the middle of a migration must not block the claim that takes the pod
// over).

import type { PodClaimIndex, PodClaimRef } from '../api/admission-request.ts';
import { bindingOf } from '../api/claim-binding.ts';
import { ClaimIndex, type ReferencingClaim } from '../pool/claim-index.ts';
import { field, nonEmpty } from './read.ts';

/** The fields the index reads, from an object as the API returns it; undefined without a name. */
function claimOf(raw: unknown): ReferencingClaim | undefined {
  const name = nonEmpty(field(raw, 'metadata', 'name'));
  if (name === undefined) return undefined;
  const claim: ReferencingClaim = {
    metadata: { name, namespace: nonEmpty(field(raw, 'metadata', 'namespace')) ?? '' },
    spec: {},
  };
  const uid = nonEmpty(field(raw, 'metadata', 'uid'));
  const deletionTimestamp = nonEmpty(field(raw, 'metadata', 'deletionTimestamp'));
  if (uid !== undefined) claim.metadata.uid = uid;
  if (deletionTimestamp !== undefined) claim.metadata.deletionTimestamp = deletionTimestamp;
  // The binding as api/claim-binding.ts reads it: status, and spec for a claim an earlier release stored.
  for (const f of ['podName', 'sourcePod'] as const) {
    const legacy = nonEmpty(field(raw, 'spec', f));
    const recorded = nonEmpty(field(raw, 'status', f));
    if (legacy !== undefined) claim.spec[f] = legacy;
    if (recorded !== undefined) claim.status = { ...claim.status, [f]: recorded };
  }
  for (const f of ['nodeName', 'podUID'] as const) {
    const recorded = nonEmpty(field(raw, 'status', f));
    if (recorded !== undefined) claim.status = { ...claim.status, [f]: recorded };
  }
  return claim;
}

/** core's ClaimIndex over watched claims, with the sync state the webhook needs. */
export class MemoryPodClaimIndex implements PodClaimIndex {
  readonly enabled: boolean;
  private readonly index = new ClaimIndex<ReferencingClaim>();
  private isSynced: boolean;

  constructor(opts: { enabled?: boolean; synced?: boolean } = {}) {
    this.enabled = opts.enabled ?? true;
    this.isSynced = opts.synced ?? false;
  }

  synced(): boolean {
    return this.isSynced;
  }

  markSynced(): void {
    this.isSynced = true;
  }

  get size(): number {
    return this.index.size;
  }

  /** Adds or replaces a claim (a PodClaim object as the API returns it). */
  upsert(raw: unknown): void {
    const claim = claimOf(raw);
    if (claim !== undefined) this.index.upsert(claim);
  }

  remove(raw: unknown): void {
    const claim = claimOf(raw);
    if (claim !== undefined) this.index.remove(claim);
  }

  /** Replaces the whole content (a relist) and marks the index synced. */
  replace(claims: readonly unknown[]): void {
    this.index.replace(claims.map(claimOf).filter((c): c is ReferencingClaim => c !== undefined));
    this.isSynced = true;
  }

  claimsReferencing(namespace: string, pod: string): PodClaimRef[] {
    const out = new Map<string, PodClaimRef>();
    for (const { claim } of this.index.referencing(namespace, pod)) {
      const ref: PodClaimRef = { namespace: claim.metadata.namespace ?? '', name: claim.metadata.name };
      if (claim.metadata.uid !== undefined) ref.uid = claim.metadata.uid;
      const { podName, sourcePod } = bindingOf(claim);
      if (podName !== undefined) ref.podName = podName;
      if (sourcePod !== undefined) ref.sourcePod = sourcePod;
      out.set(claim.metadata.name, ref);
    }
    return [...out.values()];
  }
}
