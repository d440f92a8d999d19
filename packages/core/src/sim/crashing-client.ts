// A controller process that dies mid-decision: its client throws CrashNow after `n` writes.
import { intercept } from '../api/interceptor.ts';
import type { Client } from '../api/ports.ts';
import { isWriteVerb } from '../api/verbs.ts';
import type { ApiModel } from '../model/api-model.ts';

export class CrashNow extends Error {}

/** A client that dies after `n` writes: the decision's remaining writes never happen. */
export function crashingClient(model: ApiModel, n: number): Client {
  let left = n;
  return intercept(model as Client, {
    request: (call, next) => {
      if (isWriteVerb(call.verb) && left-- <= 0) throw new CrashNow('controller crashed mid-decision');
      return next();
    },
  });
}
