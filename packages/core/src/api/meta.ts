// The subset of Kubernetes object metadata claimkit reads and writes, as plain JSON-shaped data.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  /** Used by create only: the server appends random characters (PodClaimSet claims). */
  generateName?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
}

/** Namespace + name: how every object is addressed. */
export interface ObjectKey {
  namespace: string;
  name: string;
}

export function keyOf(obj: { metadata: ObjectMeta }): ObjectKey {
  return { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name };
}

export function keyString(key: ObjectKey): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

export function parseKey(s: string): ObjectKey {
  const i = s.indexOf('/');
  return i < 0 ? { namespace: '', name: s } : { namespace: s.slice(0, i), name: s.slice(i + 1) };
}

/** Kubernetes timestamps: RFC 3339; claimkit writes millisecond precision where the schema allows. */
export function toTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

export function toSecondsTimestamp(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function parseTimestamp(s: string | undefined): number | undefined {
  if (s === undefined || s === '') return undefined;
  const known = parsedTimestamps.get(s);
  if (known !== undefined) return known;
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) return undefined;
  // Pool reconciles order thousands of pods by creationTimestamp (second resolution, so few
  // distinct strings); Date.parse was the controller's top self time at 3,900 pods.
  if (parsedTimestamps.size >= PARSED_TIMESTAMPS_MAX) parsedTimestamps.clear();
  parsedTimestamps.set(s, ms);
  return ms;
}

const PARSED_TIMESTAMPS_MAX = 4096;
const parsedTimestamps = new Map<string, number>();
