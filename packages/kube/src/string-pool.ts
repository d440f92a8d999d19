// One copy of the strings a cache holds many equal copies of. JSON.parse makes a new string for every
// value it reads, so 10,000 cached claims and their pods held 30,000 copies of their namespace, 20,000
// of their phase, 10,000 of their image, their condition's type, status and reason, their finalizer
// and their label values (~5 MB at 10,000 claims). The informer passes each object it stores through
// a pool, which replaces those values with the copy it already has. Values that are unique to an
// object (claimed-by, a claim's pod name) pass through too; the pool forgets everything when it
// reaches its capacity, so they never pile up, and a common value is back after its next sighting.
import type { KubeObject } from '@claimkit/core';

/** How many distinct strings a pool keeps before it starts over. */
export const STRING_POOL_CAPACITY = 8192;
/** Longer strings (an annotation holding JSON, a long condition message) are left as they are. */
export const MAX_POOLED_LENGTH = 128;

type Bag = Record<string, unknown>;

// The fields pooled, per place (constants: internObject runs for every object an informer stores).
const TOP = ['apiVersion', 'kind'];
const METADATA = ['namespace', 'creationTimestamp', 'generateName'];
const OWNER_REFERENCE = ['apiVersion', 'kind', 'name', 'uid'];
const SPEC = ['nodeName', 'poolName'];
const CONTAINER = ['name', 'image'];
const STATUS = ['phase', 'hostIP'];
const CONDITION = ['type', 'status', 'reason', 'message', 'lastTransitionTime'];

const isBag = (v: unknown): v is Bag => typeof v === 'object' && v !== null && !Array.isArray(v);

export class StringPool {
  private readonly strings = new Map<string, string>();
  private readonly capacity: number;

  constructor(capacity = STRING_POOL_CAPACITY) {
    this.capacity = capacity;
  }

  get size(): number {
    return this.strings.size;
  }

  has(s: string): boolean {
    return this.strings.has(s);
  }

  /** The pool's copy of `s` (adding it), or `s` itself when it is too long to pool. */
  intern(s: string): string {
    if (s.length > MAX_POOLED_LENGTH) return s;
    const have = this.strings.get(s);
    if (have !== undefined) return have;
    if (this.strings.size >= this.capacity) this.strings.clear();
    this.strings.set(s, s);
    return s;
  }

  /**
   * Replaces, in place, the repeated strings of an object about to be cached: apiVersion, kind,
   * metadata (namespace, creationTimestamp, label and annotation values, finalizers, owner
   * references), containers' names and images, the node name, and the status phase, host IP and
   * conditions. Equal strings replace equal strings, so nothing a reader sees changes; frozen parts
   * are left alone.
   */
  internObject(o: KubeObject): void {
    const obj = o as unknown as Bag;
    this.props(obj, TOP);
    const md = obj.metadata;
    if (isBag(md)) {
      this.props(md, METADATA);
      this.values(md.labels);
      this.values(md.annotations);
      this.items(md.finalizers);
      if (Array.isArray(md.ownerReferences))
        for (const r of md.ownerReferences) if (isBag(r)) this.props(r, OWNER_REFERENCE);
    }
    const spec = obj.spec;
    if (isBag(spec)) {
      this.props(spec, SPEC);
      for (const list of [spec.containers, spec.initContainers])
        if (Array.isArray(list)) for (const c of list) if (isBag(c)) this.props(c, CONTAINER);
    }
    const status = obj.status;
    if (isBag(status)) {
      this.props(status, STATUS);
      if (Array.isArray(status.conditions))
        for (const c of status.conditions) if (isBag(c)) this.props(c, CONDITION);
    }
  }

  private props(bag: Bag, keys: readonly string[]): void {
    if (Object.isFrozen(bag)) return;
    for (const k of keys) {
      const v = bag[k];
      if (typeof v === 'string') bag[k] = this.intern(v);
    }
  }

  private values(bag: unknown): void {
    if (!isBag(bag) || Object.isFrozen(bag)) return;
    for (const k in bag) {
      const v = bag[k];
      if (typeof v === 'string') bag[k] = this.intern(v);
    }
  }

  private items(list: unknown): void {
    if (!Array.isArray(list) || Object.isFrozen(list)) return;
    for (let i = 0; i < list.length; i++) {
      const v = list[i];
      if (typeof v === 'string') list[i] = this.intern(v);
    }
  }
}
