// A controller process that dies mid-decision: its client throws CrashNow after `n` writes.
import type { Client, MergePatch } from '../api/ports.ts';
import type { ApiModel } from '../model/api-model.ts';

export class CrashNow extends Error {}

/** A client that dies after `n` writes: the decision's remaining writes never happen. */
export function crashingClient(model: ApiModel, n: number): Client {
  let left = n;
  const guard = () => {
    if (left-- <= 0) throw new CrashNow('controller crashed mid-decision');
  };
  const guarded =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      guard();
      return fn(...args);
    };
  return {
    get: (k, key) => model.get(k, key),
    list: (k, o) => model.list(k, o),
    create: guarded((o) => model.create(o)),
    update: guarded((o) => model.update(o)),
    updateStatus: guarded((o) => model.updateStatus(o)),
    patch: guarded((k, key, p: MergePatch, o) => model.patch(k, key, p, o)),
    patchStatus: guarded((k, key, p: MergePatch, o) => model.patchStatus(k, key, p, o)),
    delete: guarded((k, key, o) => model.delete(k, key, o)),
  } as Client;
}
