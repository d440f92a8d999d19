// A pool that starts its pods from a Capture's result (PodPool spec.source). DESIGN.md: "A PodPool
// may start its pods from a Capture's result; only a fenced result may seed a pool." Whether the
// Capture's standing result is fenced is capture/result-fence.ts' judgement, used here unchanged:
// a result beside an open claim, or with a token that is not the epoch (a holder that lost its
// claim), never seeds a pod. What a fenced result puts on a new pod: annotations naming the capture,
// the ref and the token, the same as env in every container, and for an `image:` ref the source
// container's image (a checkpoint OCI image, which the node's runtime restores: pool/restore.ts).
import { type ConditionSpec, findCondition } from '../api/conditions.ts';
import {
  ANNOTATION_SOURCE_CAPTURE,
  ANNOTATION_SOURCE_REF,
  ANNOTATION_SOURCE_TOKEN,
  ENV_SOURCE_REF,
  ENV_SOURCE_TOKEN,
  SOURCE_ANNOTATIONS,
  SOURCE_IMAGE_PREFIX,
} from '../api/constants.ts';
import { type EventSpec, event } from '../api/decision.ts';
import type { Capture, Container, Pod, PodPool, PodPoolSource, PodTemplateSpec } from '../api/types.ts';
import { unfencedResult } from '../capture/result-fence.ts';

export const CONDITION_SOURCE_READY = 'SourceReady';
/**
 * How often a pool whose source is not ready looks again. Capture events wake it first (map-event.ts
 * routes a Capture's change to the pools that name it); this is only the level-triggered fallback.
 */
export const SOURCE_WAIT_MS = 30_000;

/** The fenced result a pool's new pods start from. */
export interface PoolSeed {
  captureName: string;
  token: number;
  ref: string;
}

export type SourceNotReadyReason =
  | 'CaptureNotFound'
  | 'NotCaptured'
  | 'ResultNotFenced'
  | 'ContainerNotFound';

/** What a pool's spec.source allows: no source, a fenced seed, or no pods (and why). */
export type PoolSourceState =
  | { kind: 'none' }
  | { kind: 'fenced'; seed: PoolSeed }
  | { kind: 'notReady'; reason: SourceNotReadyReason; message: string };

export const NO_SOURCE: PoolSourceState = Object.freeze({ kind: 'none' });

/** Index of the container an `image:` ref replaces: the named one, or the first; -1 when none matches. */
function sourceContainerIndex(template: PodTemplateSpec, source: PodPoolSource): number {
  const containers = template.spec.containers ?? [];
  if (source.container === undefined) return containers.length > 0 ? 0 : -1;
  return containers.findIndex((c) => c.name === source.container);
}

/**
 * Judges `capture` (the Capture spec.source names, as read; undefined when not found) for `pool`.
 * A seed only from a fenced result (capture/result-fence.ts): no claim open and 1 <= token == epoch.
 */
export function judgePoolSource(pool: PodPool, capture: Capture | undefined): PoolSourceState {
  const source = pool.spec.source;
  if (!source) return NO_SOURCE;
  const name = source.captureName;
  if (!capture || capture.metadata.name !== name) {
    return {
      kind: 'notReady',
      reason: 'CaptureNotFound',
      message: `capture ${name} not found in namespace ${pool.metadata.namespace ?? ''}; no pods are created until it exists and has a fenced result`,
    };
  }
  if (sourceContainerIndex(pool.spec.template, source) < 0) {
    return {
      kind: 'notReady',
      reason: 'ContainerNotFound',
      message: `spec.source.container ${JSON.stringify(source.container)} names no container of the template; no pods are created`,
    };
  }
  const status = capture.status ?? {};
  const result = status.result;
  if (!result) {
    return {
      kind: 'notReady',
      reason: 'NotCaptured',
      message: `capture ${name} has no result yet (phase ${status.phase ?? 'Pending'}); no pods are created until it has a fenced result`,
    };
  }
  const why = unfencedResult(status);
  if (why !== undefined) {
    return {
      kind: 'notReady',
      reason: 'ResultNotFenced',
      message: `the result ${result.ref} (token ${result.token}) of capture ${name} is not fenced: ${why}; no pods are created from it`,
    };
  }
  return { kind: 'fenced', seed: { captureName: name, token: result.token, ref: result.ref } };
}

/** judgePoolSource with the Capture looked up in `captures` (a snapshot of the pool's namespace or more). */
export function sourceStateOf(pool: PodPool, captures: readonly Capture[]): PoolSourceState {
  const source = pool.spec.source;
  if (!source) return NO_SOURCE;
  const ns = pool.metadata.namespace ?? '';
  return judgePoolSource(
    pool,
    captures.find((c) => (c.metadata.namespace ?? '') === ns && c.metadata.name === source.captureName),
  );
}

/** The pool's SourceReady condition, or undefined for a pool without spec.source. */
export function sourceCondition(pool: PodPool, state: PoolSourceState): ConditionSpec | undefined {
  const observedGeneration = pool.metadata.generation ?? 0;
  switch (state.kind) {
    case 'none':
      return undefined;
    case 'notReady':
      return {
        type: CONDITION_SOURCE_READY,
        status: 'False',
        reason: state.reason,
        message: state.message,
        observedGeneration,
      };
    case 'fenced':
      return {
        type: CONDITION_SOURCE_READY,
        status: 'True',
        reason: 'Fenced',
        message: `new pods start from the fenced result ${state.seed.ref} (token ${state.seed.token}) of capture ${state.seed.captureName}`,
        observedGeneration,
      };
  }
}

/**
 * One Event per change of what the source says (a new reason, or a new fenced result), judged
 * against the pool's SourceReady condition as last written: Warning when a result stands that may
 * not seed (ResultNotFenced) or the spec names no container, Normal while waiting or once fenced.
 */
export function sourceEvent(
  pool: PodPool,
  state: PoolSourceState,
  want: ConditionSpec,
): EventSpec | undefined {
  const before = findCondition(pool.status?.conditions, CONDITION_SOURCE_READY);
  const changed =
    before?.status !== want.status ||
    before.reason !== want.reason ||
    (state.kind === 'fenced' && before.message !== want.message);
  if (!changed) return undefined;
  if (state.kind === 'fenced') return event(pool, 'Normal', 'SourceFenced', want.message);
  if (state.kind === 'none') return undefined;
  const warn = state.reason === 'ResultNotFenced' || state.reason === 'ContainerNotFound';
  return event(pool, warn ? 'Warning' : 'Normal', state.reason, want.message);
}

/** The source annotations a pod carries (all three), or undefined. */
export function podSeed(pod: Pod): PoolSeed | undefined {
  const a = pod.metadata.annotations ?? {};
  const captureName = a[ANNOTATION_SOURCE_CAPTURE];
  const ref = a[ANNOTATION_SOURCE_REF];
  const token = a[ANNOTATION_SOURCE_TOKEN];
  if (captureName === undefined || ref === undefined || token === undefined) return undefined;
  return { captureName, ref, token: Number(token) };
}

/** Annotations without any `claimkit.dev/source-*` key (a template's own are never copied to a pod). */
export function withoutSourceAnnotations(annotations: Record<string, string>): Record<string, string> {
  const out = { ...annotations };
  for (const k of SOURCE_ANNOTATIONS) delete out[k];
  return out;
}

interface EnvVar {
  name: string;
  [field: string]: unknown;
}

function seededContainer(c: Container, seed: PoolSeed): Container {
  const env = (Array.isArray(c.env) ? (c.env as EnvVar[]) : []).filter(
    (e) => e.name !== ENV_SOURCE_REF && e.name !== ENV_SOURCE_TOKEN,
  );
  return {
    ...c,
    env: [
      ...env,
      { name: ENV_SOURCE_REF, value: seed.ref },
      { name: ENV_SOURCE_TOKEN, value: String(seed.token) },
    ],
  };
}

/**
 * A new pool pod (as created from the template) seeded from `seed`: the source annotations, the
 * env in every container (init containers included), and for an `image:` ref the source container's
 * image (the checkpoint image the runtime restores; pulled IfNotPresent: the template's pull policy
 * was for its own image, and a checkpoint image is pinned by digest) unless `cold` (pool/restore.ts:
 * the template's own image). Returns a new object; `pod` is not changed.
 */
export function seedPod(pod: Pod, source: PodPoolSource, seed: PoolSeed, o: { cold?: boolean } = {}): Pod {
  const containers = pod.spec.containers.map((c) => seededContainer(c, seed));
  if (seed.ref.startsWith(SOURCE_IMAGE_PREFIX) && !o.cold) {
    const i = source.container === undefined ? 0 : containers.findIndex((c) => c.name === source.container);
    const image = seed.ref.slice(SOURCE_IMAGE_PREFIX.length);
    if (i >= 0 && image !== '') containers[i] = { ...containers[i]!, image, imagePullPolicy: 'IfNotPresent' };
  }
  const init = pod.spec.initContainers;
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      annotations: {
        ...withoutSourceAnnotations(pod.metadata.annotations ?? {}),
        [ANNOTATION_SOURCE_CAPTURE]: seed.captureName,
        [ANNOTATION_SOURCE_REF]: seed.ref,
        [ANNOTATION_SOURCE_TOKEN]: String(seed.token),
      },
    },
    spec: {
      ...pod.spec,
      containers,
      ...(Array.isArray(init)
        ? { initContainers: (init as Container[]).map((c) => seededContainer(c, seed)) }
        : {}),
    },
  };
}
