// Whether a seeded pool's pods really resumed from the checkpoint image (PodPool spec.source with an
// `image:` result ref). The pool hands the image to the node's runtime; only the runtime can restore
// (containerd 2.1-2.3 with restore via CreateContainer, CRI-O), and it says that it could not only
// in the pod's container status: the image cannot be pulled (missing, digest mismatch, the registry
// down), the runtime cannot create a container from it (containerd 2.4 has no restore path: "no
// command specified"), or CRIU refuses at start. Such a pod is never Ready, so it is never handed
// out; what the pool does then is spec.source.onRestoreFailure:
//   Wait (default)  keep the pod as it is (the kubelet retries: a registry that comes back heals it)
//                   and say why (condition SourceRestored=False, a Warning Event per pod);
//   Cold            delete it and start that result's pods cold (the template's own image, still
//                   with the source annotations and env, so the application may warm itself),
//                   remembered in status.coldStartRef until the source has another result (or the
//                   policy is Wait); cold pods already running are kept.
import { type ConditionSpec, findCondition } from '../api/conditions.ts';
import { SOURCE_IMAGE_PREFIX } from '../api/constants.ts';
import { type EventSpec, event } from '../api/decision.ts';
import { isDeleting } from '../api/pod-predicates.ts';
import type { Container, Pod, PodPool, PodPoolSource } from '../api/types.ts';
import type { PoolSeed } from './source.ts';

export const CONDITION_SOURCE_RESTORED = 'SourceRestored';

/**
 * Waiting reasons of the kubelet that mean the container was not created or not started from its
 * image. CreateContainerConfigError is left out: it is the pod's own config (a missing Secret),
 * not the image.
 */
const RESTORE_WAITING_REASONS: ReadonlySet<string> = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'CreateContainerError',
  'RunContainerError',
]);
/** Terminated reasons of a container the runtime could not start (runc restore failing: StartError). */
const START_FAILED_REASONS: ReadonlySet<string> = new Set(['StartError', 'ContainerCannotRun']);

export interface RestoreFailure {
  pod: string;
  node: string;
  /** The kubelet's reason (ErrImagePull, CreateContainerError, StartError, ...). */
  reason: string;
  /** The runtime's own words. */
  message: string;
}

/** The checkpoint image a seed starts pods from (`image:<ref>`), or undefined for any other ref. */
function seedImage(seed: Pick<PoolSeed, 'ref'> | undefined): string | undefined {
  if (!seed?.ref.startsWith(SOURCE_IMAGE_PREFIX)) return undefined;
  const image = seed.ref.slice(SOURCE_IMAGE_PREFIX.length);
  return image === '' ? undefined : image;
}

/** The container an `image:` ref replaces: spec.source.container, or the first. */
function sourceContainer(pod: Pod, source: PodPoolSource): Container | undefined {
  const cs = pod.spec.containers ?? [];
  return source.container === undefined ? cs[0] : cs.find((c) => c.name === source.container);
}

/** The pod was started (or is being started) from the checkpoint image of `seed`: not a cold pod. */
function isRestoringPod(pod: Pod, source: PodPoolSource, seed: PoolSeed): boolean {
  const image = seedImage(seed);
  return image !== undefined && sourceContainer(pod, source)?.image === image;
}

interface ContainerStatus {
  name?: string;
  state?: {
    waiting?: { reason?: string; message?: string };
    terminated?: { reason?: string; message?: string; exitCode?: number };
  };
  lastState?: { terminated?: { reason?: string; message?: string; exitCode?: number } };
}

/**
 * Why `pod` could not be restored from its checkpoint image, as its kubelet reports it; undefined
 * while it is being pulled or restored, once it runs, and for any pod not restoring from `seed`.
 */
export function restoreFailure(pod: Pod, source: PodPoolSource, seed: PoolSeed): RestoreFailure | undefined {
  if (isDeleting(pod) || !isRestoringPod(pod, source, seed)) return undefined;
  const name = sourceContainer(pod, source)?.name;
  const statuses = ((pod.status as { containerStatuses?: ContainerStatus[] } | undefined)
    ?.containerStatuses ?? []) as ContainerStatus[];
  const st = statuses.find((c) => c.name === name);
  if (!st) return undefined;
  const base = { pod: pod.metadata.name, node: pod.spec.nodeName ?? '' };
  const waiting = st.state?.waiting;
  if (waiting?.reason && RESTORE_WAITING_REASONS.has(waiting.reason))
    return { ...base, reason: waiting.reason, message: waiting.message ?? '' };
  // A restore that CRIU refuses fails the start; the kubelet then waits (CrashLoopBackOff) with the
  // start's failure as the last state.
  for (const t of [
    st.state?.terminated,
    waiting?.reason === 'CrashLoopBackOff' ? st.lastState?.terminated : undefined,
  ]) {
    if (t?.reason && START_FAILED_REASONS.has(t.reason))
      return { ...base, reason: t.reason, message: t.message ?? `exit code ${t.exitCode ?? '?'}` };
  }
  return undefined;
}

/**
 * Some container of the pod cannot be created or started from its image (any pod, any image): such a
 * pod is never "quiet" (pool-pod-index.ts), so the pool's decision sees it in full.
 */
export function isFailingToStart(pod: Pod): boolean {
  const statuses = (pod.status as { containerStatuses?: ContainerStatus[] } | undefined)?.containerStatuses;
  if (!statuses) return false;
  return statuses.some((st) => {
    const w = st.state?.waiting?.reason;
    if (w && RESTORE_WAITING_REASONS.has(w)) return true;
    const t = st.state?.terminated?.reason;
    const last = w === 'CrashLoopBackOff' ? st.lastState?.terminated?.reason : undefined;
    return (
      (t !== undefined && START_FAILED_REASONS.has(t)) ||
      (last !== undefined && START_FAILED_REASONS.has(last))
    );
  });
}

export interface RestoreJudgement {
  /** Pods of the seed that could not be restored, in name order. */
  failures: RestoreFailure[];
  /** Start new pods cold: policy Cold, and a pod of the seed fails now or failed before (status.coldStartRef). */
  startCold: boolean;
}

/** Judges the pool's pods of `seed` (an `image:` seed; otherwise nothing to judge). */
export function judgeRestore(
  pool: PodPool,
  pods: readonly Pod[],
  seed: PoolSeed | undefined,
): RestoreJudgement {
  const source = pool.spec.source;
  if (!source || !seed || seedImage(seed) === undefined) return { failures: [], startCold: false };
  const failures: RestoreFailure[] = [];
  for (const p of pods) {
    const f = restoreFailure(p, source, seed);
    if (f) failures.push(f);
  }
  failures.sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0));
  const cold = source.onRestoreFailure === 'Cold';
  return { failures, startCold: cold && (failures.length > 0 || pool.status?.coldStartRef === seed.ref) };
}

function describeFailure(f: RestoreFailure): string {
  const words = f.message.length > 300 ? `${f.message.slice(0, 297)}...` : f.message;
  return `pod ${f.pod} on node ${f.node || '(none)'}: ${f.reason}${words ? `: ${words}` : ''}`;
}

const MAX_NAMED = 5;

/**
 * The pool's SourceRestored condition: undefined for a pool whose seed is not an `image:` ref (the
 * condition goes), else True while no pod fails, False with the failing pods named, or with reason
 * StartingCold while the result's pods start cold.
 */
export function restoreCondition(
  pool: PodPool,
  seed: PoolSeed | undefined,
  j: RestoreJudgement,
): ConditionSpec | undefined {
  const image = seedImage(seed);
  if (!pool.spec.source || image === undefined) return undefined;
  const observedGeneration = pool.metadata.generation ?? 0;
  const policy = pool.spec.source.onRestoreFailure ?? 'Wait';
  if (j.failures.length === 0) {
    return j.startCold
      ? {
          type: CONDITION_SOURCE_RESTORED,
          status: 'False',
          reason: 'StartingCold',
          message: `a pod of ${image} could not be restored: its pods start cold (onRestoreFailure: Cold) until the source has another result`,
          observedGeneration,
        }
      : {
          type: CONDITION_SOURCE_RESTORED,
          status: 'True',
          reason: 'Restored',
          message: `new pods start as restored copies of ${image}`,
          observedGeneration,
        };
  }
  const named = j.failures.slice(0, MAX_NAMED).map(describeFailure);
  const more = j.failures.length > MAX_NAMED ? `; and ${j.failures.length - MAX_NAMED} more` : '';
  const then =
    policy === 'Cold'
      ? "they are deleted and this result's pods start cold (onRestoreFailure: Cold)"
      : 'they are not handed out and are left to retry (onRestoreFailure: Wait)';
  return {
    type: CONDITION_SOURCE_RESTORED,
    status: 'False',
    reason: 'RestoreFailed',
    message: `${j.failures.length} pod(s) could not be restored from ${image}: ${named.join('; ')}${more}; ${then}`,
    observedGeneration,
  };
}

/**
 * A Warning `RestoreFailed` Event for each failing pod the condition as last written did not name
 * (one per pod and failure, not one per reconcile), and `StartingCold` once when the pool turns cold.
 */
export function restoreEvents(pool: PodPool, seed: PoolSeed | undefined, j: RestoreJudgement): EventSpec[] {
  const image = seedImage(seed);
  if (image === undefined) return [];
  const before = findCondition(pool.status?.conditions, CONDITION_SOURCE_RESTORED);
  const said = before?.status === 'False' ? (before.message ?? '') : '';
  const out: EventSpec[] = [];
  for (const f of j.failures.slice(0, MAX_NAMED)) {
    if (said.includes(`pod ${f.pod} on node`)) continue;
    out.push(event(pool, 'Warning', 'RestoreFailed', `${describeFailure(f)} (image ${image})`));
  }
  if (j.startCold && before?.reason !== 'StartingCold' && before?.reason !== 'RestoreFailed')
    out.push(
      event(
        pool,
        'Warning',
        'StartingCold',
        `new pods of the pool start cold: ${image} could not be restored`,
      ),
    );
  return out;
}
