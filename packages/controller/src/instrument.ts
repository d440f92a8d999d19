// Counts API requests by verb, kind and HTTP code around any Client / ListWatcher (the in-memory
// model in tests, @claimkit/kube in the process). Also the source of "API writes per bind".
import { type Client, isApiError, type ListWatcher } from '@claimkit/core';

export type RequestObserver = (r: { verb: string; kind: string; code: number }) => void;

const codeOf = (e: unknown): number => (isApiError(e) ? e.code : 0);

async function observed<T>(
  obs: RequestObserver,
  verb: string,
  kind: string,
  p: () => Promise<T>,
): Promise<T> {
  try {
    const v = await p();
    obs({ verb, kind, code: verb === 'create' ? 201 : 200 });
    return v;
  } catch (e) {
    obs({ verb, kind, code: codeOf(e) });
    throw e;
  }
}

export function instrumentClient(c: Client, obs: RequestObserver): Client {
  return {
    get: (kind, key) => observed(obs, 'get', kind, () => c.get(kind, key)),
    list: (kind, opts) => observed(obs, 'list', kind, () => c.list(kind, opts)),
    create: (o) => observed(obs, 'create', o.kind, () => c.create(o)),
    update: (o) => observed(obs, 'update', o.kind, () => c.update(o)),
    patch: (kind, key, p, opts) => observed(obs, 'patch', kind, () => c.patch(kind, key, p, opts)),
    delete: (kind, key, opts) => observed(obs, 'delete', kind, () => c.delete(kind, key, opts)),
    updateStatus: (o) => observed(obs, 'update_status', o.kind, () => c.updateStatus(o)),
    patchStatus: (kind, key, p, opts) =>
      observed(obs, 'patch_status', kind, () => c.patchStatus(kind, key, p, opts)),
  };
}

export function instrumentSource(s: ListWatcher, obs: RequestObserver): ListWatcher {
  return {
    list: (kind, opts) => observed(obs, 'list', kind, () => s.list(kind, opts)),
    watch: (kind, opts, handlers) => {
      // One count per watch, with the code it was answered: a watch refused at once (the model
      // closes it before returning) counts its error, as the kube client counts the HTTP status.
      let starting = true;
      let code = 200;
      const stop = s.watch(kind, opts, {
        ...handlers,
        onClose: (err) => {
          if (starting && err) code = codeOf(err);
          handlers.onClose?.(err);
        },
      });
      starting = false;
      obs({ verb: 'watch', kind, code });
      return stop;
    },
  };
}

export const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'update_status', 'patch_status']);
