// Plain-data helpers. Objects crossing a port are JSON: cloning through JSON keeps them so.

export function clone<T>(v: T): T {
  return cloneValue(v) as T;
}

// A recursive copy of JSON data (faster than a JSON round trip in V8); like JSON, it drops
// undefined object members and functions.
function cloneValue(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = v[i] === undefined ? null : cloneValue(v[i]);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== undefined && typeof x !== 'function') setOwn(out, k, cloneValue(x));
  }
  return out;
}

/**
 * Sets an own property, also for the key `__proto__` (which JSON.parse creates as an own property
 * and a plain assignment would instead treat as the object's prototype).
 */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => deepEqual(ao[k], bo[k]));
}

/**
 * RFC 7386 JSON merge patch. The result shares nothing with `target` or `patch`: the model merges
 * into its stored objects, which its event history and the lagging caches also hold, so a member
 * the patch leaves alone (say metadata, written next with the new resourceVersion) must be a copy.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return clone(patch);
  const out: Record<string, unknown> = {};
  if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
    for (const [k, v] of Object.entries(target as Record<string, unknown>)) setOwn(out, k, cloneValue(v));
  }
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else if (v !== undefined) setOwn(out, k, applyMergePatch(Object.hasOwn(out, k) ? out[k] : undefined, v));
  }
  return out;
}

/** Reads a dotted field path such as `spec.podName`. */
export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}
