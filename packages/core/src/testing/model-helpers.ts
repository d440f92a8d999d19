// Putting fixture objects into the in-memory API model the way a user and a controller would:
// create (the server assigns uid, resourceVersion, timestamps), then write status separately.

import { KIND_INFO } from '../api/types.ts';
import type { AnyObject, KubeObject } from '../index.ts';
import type { ApiModel } from '../model/api-model.ts';

export async function put<T extends AnyObject>(model: ApiModel, obj: T): Promise<T> {
  const {
    uid: _u,
    resourceVersion: _r,
    creationTimestamp: _c,
    generation: _g,
    deletionTimestamp: _d,
    ...metadata
  } = obj.metadata;
  const created = (await model.create({ ...obj, metadata } as T)) as T;
  const status = (obj as { status?: unknown }).status;
  if (status !== undefined && KIND_INFO[obj.kind].hasStatusSubresource) {
    return (await model.updateStatus({ ...created, status } as T)) as T;
  }
  return created;
}

/** Puts objects one second apart, so creationTimestamps order them as listed. */
export async function putAll(
  model: ApiModel & { clock: { now(): number } },
  ...objs: AnyObject[]
): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const o of objs) {
    out.push(await put(model, o));
    const clock = model.clock as { advance?: (ms: number) => void };
    clock.advance?.(1000);
  }
  return out;
}
