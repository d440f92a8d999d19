// A controller process that dies mid-decision: its client throws CrashNow after `n` writes.
import { intercept } from '../api/interceptor.ts';
import type { Client } from '../api/ports.ts';
import { isWriteVerb } from '../api/verbs.ts';
import type { ApiModel } from '../model/api-model.ts';

export class CrashNow extends Error {}

/**
 * A client that dies after `n` writes: the decision's remaining writes never happen. `crashed()`
 * says whether it died, because core's apply step turns any non-API error into a failed write
 * (Unavailable), so the CrashNow it throws does not always reach the caller.
 */
export function crashingClient(model: ApiModel, n: number): { client: Client; crashed: () => boolean } {
  let left = n;
  let dead = false;
  const client = intercept(model as Client, {
    request: (call, next) => {
      if (dead || (isWriteVerb(call.verb) && left-- <= 0)) {
        dead = true;
        throw new CrashNow('controller crashed mid-decision');
      }
      return next();
    },
  });
  return { client, crashed: () => dead };
}
