// Which PodClaim references which pod (spec.podName or spec.sourcePod), from a watched cache.
// The Node entry feeds it from a @kubernetes/client-node informer on PodClaims (serve-claim-index.ts);
// tests feed it directly. The webhook asks it whether a podName is already held by another claim.
// Deleting claims hold no pod against a live claim (as core's ClaimIndex decides for the controller):
// a finalizer in the middle of a migration must not block the claim that takes the pod over.
import { field, nonEmpty } from './rules/read.ts';

export interface PodClaimRef {
  namespace: string;
  name: string;
  uid?: string;
  podName?: string;
  sourcePod?: string;
}

export interface PodClaimIndex {
  /** Claims in `namespace` whose spec.podName or spec.sourcePod is `pod`. */
  claimsReferencing(namespace: string, pod: string): PodClaimRef[];
  /** False until the cache has listed once; the webhook denies pod-reference checks until then. */
  synced(): boolean;
  /** When false the index is switched off on purpose; reference checks are skipped with a warning. */
  readonly enabled: boolean;
}

function refOf(claim: unknown): PodClaimRef | undefined {
  const name = nonEmpty(field(claim, 'metadata', 'name'));
  if (name === undefined) return undefined;
  const ref: PodClaimRef = { namespace: nonEmpty(field(claim, 'metadata', 'namespace')) ?? '', name };
  const uid = nonEmpty(field(claim, 'metadata', 'uid'));
  if (nonEmpty(field(claim, 'metadata', 'deletionTimestamp')) !== undefined) return ref;
  const podName = nonEmpty(field(claim, 'spec', 'podName'));
  const sourcePod = nonEmpty(field(claim, 'spec', 'sourcePod'));
  if (uid !== undefined) ref.uid = uid;
  if (podName !== undefined) ref.podName = podName;
  if (sourcePod !== undefined) ref.sourcePod = sourcePod;
  return ref;
}

/** An in-memory index keyed by namespace/pod; O(1) lookups, updated per watch event. */
export class MemoryPodClaimIndex implements PodClaimIndex {
  readonly enabled: boolean;
  private readonly claims = new Map<string, PodClaimRef>();
  private readonly byPod = new Map<string, Set<string>>();
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
    return this.claims.size;
  }

  /** Adds or replaces a claim (a PodClaim object as the API returns it). */
  upsert(claim: unknown): void {
    const ref = refOf(claim);
    if (ref === undefined) return;
    const key = `${ref.namespace}/${ref.name}`;
    this.removeKey(key);
    this.claims.set(key, ref);
    for (const pod of podsOf(ref)) {
      const pk = `${ref.namespace}/${pod}`;
      let set = this.byPod.get(pk);
      if (set === undefined) {
        set = new Set();
        this.byPod.set(pk, set);
      }
      set.add(key);
    }
  }

  remove(claim: unknown): void {
    const ref = refOf(claim);
    if (ref !== undefined) this.removeKey(`${ref.namespace}/${ref.name}`);
  }

  /** Replaces the whole content (a relist) and marks the index synced. */
  replace(claims: readonly unknown[]): void {
    this.claims.clear();
    this.byPod.clear();
    for (const c of claims) this.upsert(c);
    this.isSynced = true;
  }

  claimsReferencing(namespace: string, pod: string): PodClaimRef[] {
    const keys = this.byPod.get(`${namespace}/${pod}`);
    if (keys === undefined) return [];
    return [...keys].map((k) => this.claims.get(k)!).filter((r) => r !== undefined);
  }

  private removeKey(key: string): void {
    const old = this.claims.get(key);
    if (old === undefined) return;
    this.claims.delete(key);
    for (const pod of podsOf(old)) {
      const pk = `${old.namespace}/${pod}`;
      const set = this.byPod.get(pk);
      set?.delete(key);
      if (set?.size === 0) this.byPod.delete(pk);
    }
  }
}

function podsOf(ref: PodClaimRef): string[] {
  const out: string[] = [];
  if (ref.podName !== undefined) out.push(ref.podName);
  if (ref.sourcePod !== undefined && ref.sourcePod !== ref.podName) out.push(ref.sourcePod);
  return out;
}
