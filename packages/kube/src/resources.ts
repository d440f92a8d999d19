// How core's kinds map onto the API server's REST surface: collection and object paths, the
// selector query parameters, and the type meta the server leaves out of list items and watch events.
import {
  formatSelector,
  KIND_INFO,
  type Kind,
  type KubeObject,
  type LabelSelector,
  type ObjectKey,
} from '@claimkit/core';
import { httpError } from './errors.ts';

export function selectorString(sel: LabelSelector | string | undefined): string | undefined {
  if (sel === undefined) return undefined;
  const s = typeof sel === 'string' ? sel : formatSelector(sel);
  return s === '' ? undefined : s;
}

export function fieldSelectorString(fs: Record<string, string> | undefined): string | undefined {
  if (!fs) return undefined;
  const parts = Object.entries(fs).map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join(',') : undefined;
}

/** `/api/v1` or `/apis/<group>/<version>`. */
function groupPrefix(kind: Kind): string {
  const apiVersion = KIND_INFO[kind]?.apiVersion;
  if (!apiVersion) throw httpError(400, { message: `unknown kind ${String(kind)}` });
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

export function collectionPath(kind: Kind, namespace: string | undefined): string {
  const plural = KIND_INFO[kind].plural;
  return namespace
    ? `${groupPrefix(kind)}/namespaces/${encodeURIComponent(namespace)}/${plural}`
    : `${groupPrefix(kind)}/${plural}`;
}

export function objectPath(kind: Kind, key: ObjectKey, sub?: 'status'): string {
  if (!key.name) throw httpError(400, { message: `${KIND_INFO[kind].plural}: a name is required` });
  const p = `${collectionPath(kind, key.namespace)}/${encodeURIComponent(key.name)}`;
  return sub ? `${p}/${sub}` : p;
}

/** Sets apiVersion and kind on `o` (list items and watch objects come without them). */
export function withTypeMeta<T>(kind: Kind, o: T): T {
  const obj = o as unknown as KubeObject;
  if (obj && typeof obj === 'object') {
    obj.apiVersion = KIND_INFO[kind].apiVersion;
    obj.kind = kind;
  }
  return o;
}

/** For messages: `ns/name`, or `name` for cluster-scoped objects. */
export function keyText(key: ObjectKey): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

/** For messages: `podclaims in ns`, or `podclaims` across namespaces. */
export function collectionText(kind: Kind, namespace: string | undefined): string {
  return `${KIND_INFO[kind].plural}${namespace ? ` in ${namespace}` : ''}`;
}
