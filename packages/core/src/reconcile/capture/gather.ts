// Gathers a Capture's snapshot: the capture and its candidate pods from the cache, the holder
// confirmed live (lookupHolder), and the backend's answer for the recorded job.
import { getOrUndefined } from '../../api/errors.ts';
import type { ObjectKey } from '../../api/meta.ts';
import type { Pod } from '../../api/types.ts';
import { lookupHolder } from '../../capture/holder-liveness.ts';
import { jobRequest } from './job-start.ts';
import type { CaptureDeps, CaptureSnapshot } from './snapshot.ts';

export async function gatherCapture(deps: CaptureDeps, key: ObjectKey): Promise<CaptureSnapshot | undefined> {
  const capture = await getOrUndefined(deps.cache.get('Capture', key));
  if (!capture) return undefined;
  // Candidates by the capture's selector (not the whole namespace), plus the holder by name.
  let pods = (
    await deps.cache.list('Pod', { namespace: key.namespace, labelSelector: capture.spec.selector })
  ).items;
  const holderName = capture.status?.claim?.holder.name;
  if (holderName && !pods.some((p) => p.metadata.name === holderName)) {
    const holder = await getOrUndefined(
      deps.cache.get('Pod', { namespace: key.namespace, name: holderName }),
    );
    // A copy to add it: a cache's list may be frozen and shared (ports.ts).
    if (holder) pods = [...pods, holder];
  }
  const snap: CaptureSnapshot = {
    capture,
    pods,
    now: deps.now(),
    ...(deps.backend ? { startsJobs: true } : {}),
  };
  const claim = capture.status?.claim;
  if (claim) {
    snap.holder = await lookupHolder(deps, key.namespace, claim.holder.name, pods);
    if (claim.job && deps.backend && capture.spec.backend.type !== 'External') {
      const holderPod = 'found' in snap.holder && snap.holder.found ? snap.holder.pod : undefined;
      const req = holderPod
        ? jobRequest(capture, holderPod, claim.token)
        : { ...jobRequest(capture, fakeHolderPod(claim.holder.name, claim.holder.uid), claim.token) };
      try {
        snap.job = await deps.backend.poll(capture.spec.backend.url ?? '', claim.job.id, req);
      } catch (e) {
        snap.job = { error: String((e as Error)?.message ?? e) };
      }
    }
  }
  snap.now = deps.now();
  return snap;
}

function fakeHolderPod(name: string, uid: string): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, uid }, spec: { containers: [] } };
}
