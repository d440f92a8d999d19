// Template hash: every pool pod carries the hash of the PodPool template it was created from (as a
// ReplicaSet's pods carry pod-template-hash), so a template change can tell outdated pods apart.
// Pods without the label were created before the label existed and count as outdated.
import { fnv1a64 } from '../api/hash.ts';
import type { Pod, PodPool, PodTemplateSpec, ReleasePolicy } from '../api/types.ts';
import { NO_SOURCE, type PoolSeed, type PoolSourceState } from './source.ts';

export const LABEL_TEMPLATE_HASH = 'claimkit.dev/template-hash';

/** JSON with object keys sorted, so the same template always serialises (and hashes) the same. */
function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}

/** A label-safe, stable hash of a pod template (10 hex characters). */
export function templateHash(template: PodTemplateSpec): string {
  return fnv1a64(canonicalJson(template)).slice(0, 10);
}

/**
 * The hash of the pods a pool creates: its template's, and for a pool seeded from a Capture's fenced
 * result (spec.source) the template together with the seed (capture, token, ref) and the source
 * container, so a new fenced result rolls Idle pods as a template change does.
 */
export function poolTemplateHash(pool: PodPool, seed?: PoolSeed): string {
  if (!seed) return templateHash(pool.spec.template);
  const source = {
    ...seed,
    ...(pool.spec.source?.container ? { container: pool.spec.source.container } : {}),
  };
  return fnv1a64(canonicalJson({ template: pool.spec.template, source })).slice(0, 10);
}

/**
 * The hash a pool's new pods get given what its source allows; undefined while a spec.source has
 * no fenced result (no pod is created then, and no pod is judged outdated).
 */
export function currentTemplateHash(pool: PodPool, source: PoolSourceState): string | undefined {
  if (source.kind === 'notReady') return undefined;
  return poolTemplateHash(pool, source.kind === 'fenced' ? source.seed : undefined);
}

export const podTemplateHash = (pod: Pod): string | undefined =>
  pod.metadata.labels?.[LABEL_TEMPLATE_HASH] || undefined;

/** Created from the pool's current template (pods without the label are outdated). */
export const isUpdatedPod = (pod: Pod, currentHash: string): boolean => podTemplateHash(pod) === currentHash;

/**
 * How a released pod leaves its claim: the pool's releasePolicy, except that a pod of an outdated
 * template is deleted instead of recycled (a template rollout replaces it with a current one).
 */
export interface PodRelease {
  policy: ReleasePolicy;
  /** The pool's current template hash; unset when the pool is unknown (no rollout then). */
  templateHash?: string;
}

/**
 * The release of a pool's pods. A pool with spec.source judges outdated pods only against a fenced
 * seed: `source` is what judgePoolSource said (pool/source.ts); without it, or while the source is not
 * ready, released pods follow the releasePolicy alone.
 */
export function poolRelease(pool: PodPool | undefined, source?: PoolSourceState): PodRelease {
  if (!pool) return { policy: 'Recycle' };
  const state = source ?? (pool.spec.source ? undefined : NO_SOURCE);
  const hash = state ? currentTemplateHash(pool, state) : undefined;
  return hash === undefined
    ? { policy: pool.spec.releasePolicy }
    : { policy: pool.spec.releasePolicy, templateHash: hash };
}

/** The policy a release of this pod applies: Delete when the pod is of an outdated template. */
export function releasePolicyFor(pod: Pod, release: PodRelease | ReleasePolicy): ReleasePolicy {
  if (typeof release === 'string') return release;
  if (release.templateHash !== undefined && !isUpdatedPod(pod, release.templateHash)) return 'Delete';
  return release.policy;
}
