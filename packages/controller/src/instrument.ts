// Counts and times API requests by verb, kind and code around any Client / ListWatcher (the in-memory model in
// tests; in the process the kube client reports its own requests, with HTTP codes, through onRequest).
// Also the source of "API writes per bind".
import {
  type Client,
  type Interceptors,
  intercept,
  isApiError,
  type ListWatcher,
  type RequestVerb,
} from '@claimkit/core';

/** core's write verbs, for readers of claimkit_api_requests_total (the benchmarks). */
export { WRITE_VERBS } from '@claimkit/core';

export type RequestObserver = (r: { verb: RequestVerb; kind: string; code: number; ms: number }) => void;

const codeOf = (e: unknown): number => (isApiError(e) ? e.code : 0);

/** One count per request: 200 (201 for create) when it succeeds, the ApiError's code when it fails. */
function counting(obs: RequestObserver): Interceptors {
  return {
    request: async (call, next) => {
      const t0 = performance.now();
      try {
        const result = await next();
        const code = call.verb === 'create' ? 201 : 200;
        obs({ verb: call.verb, kind: call.kind, code, ms: performance.now() - t0 });
        return result;
      } catch (e) {
        obs({ verb: call.verb, kind: call.kind, code: codeOf(e), ms: performance.now() - t0 });
        throw e;
      }
    },
    watch: (call, next) => {
      // One count per watch, with the code it was answered: a watch refused at once (the model
      // closes it before returning) counts its error, as the kube client counts the HTTP status.
      let starting = true;
      let code = 200;
      const stop = next({
        ...call,
        handlers: {
          ...call.handlers,
          onClose: (err) => {
            if (starting && err) code = codeOf(err);
            call.handlers.onClose?.(err);
          },
        },
      });
      starting = false;
      obs({ verb: 'watch', kind: call.kind, code, ms: 0 });
      return stop;
    },
  };
}

export function instrumentClient(c: Client, obs: RequestObserver): Client {
  return intercept(c, counting(obs));
}

export function instrumentSource(s: ListWatcher, obs: RequestObserver): ListWatcher {
  return intercept(s, counting(obs));
}
