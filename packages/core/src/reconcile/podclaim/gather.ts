// Gathers a PodClaim's snapshot: the cache for most reads, live reads before anything that declares
// a pod gone or taken (P2, P7), and a live list of claims before a finalize or a stray's release.
import { podNameOf, REFERENCE_INDEX_FIELDS, referencesPod, sourcePodOf } from '../../api/claim-binding.ts';
import { ANNOTATION_MIGRATE, ANNOTATION_MIGRATE_TO, LABEL_CLAIMED_BY } from '../../api/constants.ts';
import { getOrUndefined } from '../../api/errors.ts';
import { matchesSelector } from '../../api/labels.ts';
import type { ObjectKey } from '../../api/meta.ts';
import { isDeleting, isPodFinished } from '../../api/pod-predicates.ts';
import type { Pod, PodClaim } from '../../api/types.ts';
import { CANDIDATE_WINDOW, idlePodsSelector, readOldestBindCandidates } from '../../pool/bind-candidates.ts';
import { candidatesNotHeld, holderOf, unheldCandidates } from '../../pool/binds-in-flight.ts';
import { isReplacement } from '../../pool/bound-pod.ts';
import { claimedBy, isClaimedBy } from '../../pool/pods.ts';
import { ServingNodes } from '../../pool/serving.ts';
import type { PodClaimDeps } from './deps.ts';
import type { PodClaimSnapshot } from './snapshot.ts';

export async function gatherPodClaim(
  deps: PodClaimDeps,
  key: ObjectKey,
): Promise<PodClaimSnapshot | undefined> {
  const claim = await getOrUndefined(deps.cache.get('PodClaim', key));
  if (!claim) return undefined;
  const ns = key.namespace;
  const poolKey = { namespace: ns, name: claim.spec.poolName };
  // A pool the cache has not seen yet may just be new: a claim says PoolNotFound only on a live answer.
  const pool =
    (await getOrUndefined(deps.cache.get('PodPool', poolKey))) ??
    (await getOrUndefined(deps.client.get('PodPool', poolKey)));
  const source = pool?.spec.source;
  const poolSource = source
    ? await getOrUndefined(deps.cache.get('Capture', { namespace: ns, name: source.captureName }))
    : undefined;
  // Only the pods this claim can touch: the ones it references, the ones labelled for it, and —
  // when it binds or migrates — the oldest Idle candidates. Reading the whole pool on every
  // reconcile would make a pool of N claims cost O(N^2).
  const pods = new Map<string, Pod>();
  const add = (p: Pod) => pods.set(p.metadata.name, p);
  for (const name of [podNameOf(claim), sourcePodOf(claim)]) {
    if (!name) continue;
    const cached = await getOrUndefined(deps.cache.get('Pod', { namespace: ns, name }));
    // A cache NotFound may just be lag: ask the server (P2's live confirmation happens below too).
    const pod = cached ?? (await getOrUndefined(deps.client.get('Pod', { namespace: ns, name })));
    if (pod) add(pod);
  }
  const labelled = await deps.cache.list('Pod', {
    namespace: ns,
    labelSelector: { matchLabels: { [LABEL_CLAIMED_BY]: claim.metadata.name } },
  });
  for (const p of labelled.items) add(p);
  const deleting = Boolean(claim.metadata.deletionTimestamp);
  let unservable: Set<string> | undefined;
  let turn: number | undefined;
  const wantsPod = !podNameOf(claim) || claim.metadata.annotations?.[ANNOTATION_MIGRATE] !== undefined;
  if (!deleting && wantsPod && !sourcePodOf(claim)) {
    // The oldest Idle candidates, read oldest first until the window is full: the cost is the
    // window's, not the pool's (thousands of warm pods). Pods on NotReady or cordoned nodes are
    // never candidates (serving.ts): only the nodes of the pods looked at are read.
    const nodes = new ServingNodes(deps.cache);
    const now = deps.now();
    const self = holderOf(claim);
    // A claim binding (not migrating) takes its turn among the pool's waiting claims, when the
    // process keeps them in order: the oldest candidates up to its own are read, those another bind
    // of this process holds left out (binds in flight are neither ahead of it nor free).
    const inFlight = deps.bindsInFlight?.holders(now) ?? new Set<string>();
    turn =
      podNameOf(claim) || !deps.waiting
        ? undefined
        : deps.waiting.waitingAhead(ns, claim.spec.poolName, claim.metadata.name, inFlight);
    const oldest = await readOldestBindCandidates(
      deps.cache,
      ns,
      claim.spec.poolName,
      turn === undefined ? CANDIDATE_WINDOW : turn + 1 + inFlight.size,
      nodes,
    );
    // Pods another bind of this process is writing are left to it (fewer lost races, not safety).
    const free =
      turn === undefined
        ? unheldCandidates(oldest, deps.bindsInFlight, self, now)
        : candidatesNotHeld(oldest, deps.bindsInFlight, self, now);
    for (const p of free) add(p);
    const wanted = claim.metadata.annotations?.[ANNOTATION_MIGRATE_TO];
    const named = wanted
      ? await getOrUndefined(deps.cache.get('Pod', { namespace: ns, name: wanted }))
      : undefined;
    if (named && matchesSelector(named.metadata.labels, idlePodsSelector(claim.spec.poolName))) add(named);
    // Decide checks the node of every Idle pod of the pool it may take: all are in `pods` now.
    for (const p of pods.values())
      if (matchesSelector(p.metadata.labels, idlePodsSelector(claim.spec.poolName)))
        await nodes.isStranded(p);
    unservable = nodes.unservable;
  }
  // References to those pods (P1, P6). Finalize decides on a live view: releasing a pod another
  // claim holds would break P1, and a claim going away is rare enough to list the namespace.
  // A stray (labelled ours, not referenced by us) is released unless another claim references it:
  // decide that on a live list too, so a cache that lags a reference cannot free a held pod (P7).
  const hasStray = labelled.items.some(
    (p) => p.metadata.name !== podNameOf(claim) && p.metadata.name !== sourcePodOf(claim) && !isDeleting(p),
  );
  let claims: PodClaim[];
  if (deleting || hasStray) {
    claims = (await deps.client.list('PodClaim', { namespace: ns })).items;
  } else {
    const byUid = new Map<string, PodClaim>([[claim.metadata.uid ?? claim.metadata.name, claim]]);
    for (const name of pods.keys()) {
      for (const field of REFERENCE_INDEX_FIELDS) {
        const refs = await deps.cache.list('PodClaim', { namespace: ns, fieldSelector: { [field]: name } });
        for (const r of refs.items)
          if (referencesPod(r, name)) byUid.set(r.metadata.uid ?? r.metadata.name, r);
      }
    }
    claims = [...byUid.values()];
  }
  const snap: PodClaimSnapshot = {
    claim,
    pool,
    ...(poolSource ? { poolSource } : {}),
    pods: [...pods.values()],
    claims,
    now: deps.now(),
    ...(unservable ? { unservable } : {}),
    ...(turn !== undefined ? { turn } : {}),
  };
  const boundTo = podNameOf(claim);
  if (boundTo) {
    const cached = pods.get(boundTo);
    // Anything but "labelled ours and running" is confirmed live before deciding on it (a finished
    // pod is lost to the claim, P2: the cache must not be the one to say so).
    const healthy =
      cached &&
      !isDeleting(cached) &&
      !isPodFinished(cached) &&
      isClaimedBy(cached, claim) &&
      !isReplacement(claim, cached);
    if (!healthy) {
      const pod = await getOrUndefined(deps.client.get('Pod', { namespace: ns, name: boundTo }));
      snap.liveCurrent = pod ? { found: true, pod } : { found: false };
      if (pod) pods.set(pod.metadata.name, pod);
      snap.pods = [...pods.values()];
      // Whether that label takes the pod away depends on the claim it names (P7): read it live.
      const labelled = pod && !isDeleting(pod) && !isClaimedBy(pod, claim) ? claimedBy(pod) : undefined;
      if (labelled !== undefined) {
        const holder = await getOrUndefined(deps.client.get('PodClaim', { namespace: ns, name: labelled }));
        snap.labelHolder = holder ? { found: true, claim: holder } : { found: false };
      }
      // An unlabelled pod stays with the oldest claim referencing it (hold.ts): which claims do is
      // read live too, so a cache still showing a rival that moved on or is gone takes nothing (P7).
      const rivalInCache = claims.some(
        (c) =>
          c.metadata.uid !== claim.metadata.uid &&
          (podNameOf(c) === podNameOf(claim) || sourcePodOf(c) === podNameOf(claim)),
      );
      if (pod && !isDeleting(pod) && claimedBy(pod) === undefined && rivalInCache && !deleting && !hasStray) {
        snap.claims = (await deps.client.list('PodClaim', { namespace: ns })).items;
      }
    }
  }
  snap.now = deps.now();
  return snap;
}
