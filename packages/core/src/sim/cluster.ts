// The simulated cluster: its namespace, the people and pods that write besides the controllers, the
// objects every run starts from (a pool, a claim set, worker pods, two captures) and the kubelets.
import { LABEL_CLAIM_SET } from '../api/constants.ts';
import { keyOf } from '../api/meta.ts';
import { isPodFinished } from '../api/pod-predicates.ts';
import type { Capture, Pod, PodClaim, PodClaimSet, PodPool } from '../api/types.ts';
import type { Violation } from '../invariants/check.ts';
import type { UserInfo } from '../model/admission.ts';
import type { ApiModel } from '../model/api-model.ts';
import type { Rng } from '../model/clock.ts';

export const NS = 'sim';
/** The simulated people and pods other than the controllers (who write as the model's default). */
export const PERSON: UserInfo = { username: 'alice', groups: ['system:authenticated'] };
export const WORKER_SA: UserInfo = {
  username: `system:serviceaccount:${NS}:worker`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
};
export const ADMIN: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
export const LEASE_SECONDS = 60;
export const WORKERS = 3;

/** The pool a run may add whose pods start from one of its captures (SimOptions.poolSource). */
const SOURCE_POOL = 'warm';

/**
 * The pool `web`, the claim set `set` (2 replicas), the worker pods and the captures of a run; with
 * `source`, also the pool `warm` seeded from that capture and a solo claim `warm-0` on it.
 */
export async function createCluster(
  m: ApiModel,
  rng: Rng,
  size: { minIdle: number; maxPods: number } = { minIdle: 2, maxPods: 8 },
  source?: { capture: string },
): Promise<void> {
  const pool: PodPool = {
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodPool',
    metadata: { name: 'web', namespace: NS },
    spec: {
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'main', image: 'web:1' }] },
      },
      minIdle: size.minIdle,
      maxPods: size.maxPods,
      releasePolicy: rng.chance(0.5) ? 'Recycle' : 'Delete',
      drainSeconds: rng.chance(0.5) ? 0 : 3,
    },
  };
  await m.create(pool);
  const set: PodClaimSet = {
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodClaimSet',
    metadata: { name: 'set', namespace: NS },
    spec: {
      replicas: 2,
      selector: { matchLabels: { [LABEL_CLAIM_SET]: 'set' } },
      template: {
        metadata: { labels: { tier: 'sim' } },
        // Overrides a template label of the pool (app), so releases must restore it, not drop it.
        spec: { poolName: 'web', podMetadata: { labels: { app: 'web-claimed', [SIM_CLAIM_KEY]: 'set' } } },
      },
    },
  };
  await m.create(set);
  for (let i = 0; i < WORKERS; i++) await createWorker(m, i);
  await createCapture(m, true);
  await createCapture(m, false);
  if (source) {
    // No draw from `rng` here: a run without the pool keeps its random sequence.
    const warm: PodPool = {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodPool',
      metadata: { name: SOURCE_POOL, namespace: NS },
      spec: {
        template: {
          metadata: { labels: { app: SOURCE_POOL } },
          spec: { containers: [{ name: 'main', image: 'warm:1' }] },
        },
        minIdle: 2,
        maxPods: 4,
        releasePolicy: 'Recycle',
        drainSeconds: 0,
        source: { captureName: source.capture, container: 'main' },
      },
    };
    await m.create(warm);
    const claim = soloClaim(`${SOURCE_POOL}-0`);
    await m.create({ ...claim, spec: { ...claim.spec, poolName: SOURCE_POOL } });
  }
}

export async function createWorker(m: ApiModel, i: number): Promise<void> {
  await m.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `worker-${i}`, namespace: NS, labels: { app: 'worker' } },
    spec: { containers: [{ name: 'main', image: 'worker:1' }], nodeName: `node-${i % 2}` },
  } as Pod);
}

/** A Capture over the worker pods: `cap-http` (Http backend, the agent) or `cap-ext` (External). */
export async function createCapture(m: ApiModel, http: boolean): Promise<void> {
  const c: Capture = {
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'Capture',
    metadata: { name: http ? 'cap-http' : 'cap-ext', namespace: NS },
    spec: {
      selector: { matchLabels: { app: 'worker' } },
      leaseSeconds: LEASE_SECONDS,
      timeoutSeconds: 30,
      maxAttempts: 3,
      backend: http ? { type: 'Http', url: 'http://{nodeName}:8750/v1/captures' } : { type: 'External' },
    },
  };
  await m.create(c);
}

/** The key every simulated claim's podMetadata sets: no Idle pod may still carry it. */
const SIM_CLAIM_KEY = 'sim.example/claim';

/**
 * A claim on the pool that no set owns, with podMetadata (a label and an annotation); every third
 * one (by sequence number, so seeds keep their random sequence) has lostPolicy Fail.
 */
export function soloClaim(name: string, seq = 0): PodClaim {
  return {
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodClaim',
    metadata: { name, namespace: NS },
    spec: {
      poolName: 'web',
      podMetadata: { labels: { [SIM_CLAIM_KEY]: name }, annotations: { [SIM_CLAIM_KEY]: name } },
      ...(seq % 3 === 2 ? { lostPolicy: 'Fail' as const } : {}),
    },
  } as PodClaim;
}

/** Idle pods that still carry the key a claim's podMetadata set (M1, independent of the record). */
export function simPodMetadataResidue(pods: readonly Pod[]): Violation[] {
  return pods
    .filter(
      (p) =>
        p.metadata.labels?.['claimkit.dev/state'] === 'Idle' &&
        !p.metadata.deletionTimestamp &&
        (p.metadata.labels?.[SIM_CLAIM_KEY] !== undefined ||
          p.metadata.annotations?.[SIM_CLAIM_KEY] !== undefined ||
          p.metadata.labels?.app === 'web-claimed'),
    )
    .map((p) => ({
      invariant: 'M1' as const,
      message: 'Idle pod still carries podMetadata a claim set',
      objects: [`Pod/${NS}/${p.metadata.name}`],
    }));
}

/** What a scheduler and kubelets do: place pods, make them Running/Ready, finish deletions. */
export async function runKubelets(m: ApiModel): Promise<void> {
  m.completePodDeletions();
  for (const p of m.listNow('Pod', { namespace: NS })) {
    // A finished pod (Succeeded/Failed) never runs again: no kubelet revives it.
    if (p.metadata.deletionTimestamp || isPodFinished(p)) continue;
    if (!p.spec.nodeName) {
      const n = Number.parseInt(p.metadata.uid?.slice(-1) ?? '0', 16) % 2;
      await m.patch('Pod', keyOf(p), { spec: { nodeName: `node-${n}` } });
      continue;
    }
    if (p.status?.phase !== 'Running') {
      m.setPodStatusNow(keyOf(p), {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        podIP: '10.0.0.1',
      });
    }
  }
}
