// A client over another (the in-memory model) that counts 409s and can hold Pod patches at a gate:
// tests interleave two binds of one process (the first waits at the gate while the second decides)
// and count the races they lose; `failKind` makes that kind's patches and updates (status ones too) fail as a server
// that did not answer.
import { ApiError, isApiError } from '../api/errors.ts';
import type { Client } from '../api/ports.ts';

export interface GateState {
  /** While set, every Pod patch waits for it. */
  gate?: Promise<void>;
  /** Called when a Pod patch reaches the gate. */
  atGate?: () => void;
  /** 409s answered so far. */
  conflicts: number;
  /** Patches and updates of this kind fail with Unavailable. */
  failKind?: string;
}

export function gatedClient<C extends Client>(inner: C): { client: C; state: GateState } {
  const state: GateState = { conflicts: 0 };
  const client = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return async (...args: unknown[]) => {
        if (prop === 'patch' && args[0] === 'Pod' && state.gate) {
          state.atGate?.();
          await state.gate;
        }
        const kind = typeof args[0] === 'string' ? args[0] : (args[0] as { kind?: string })?.kind;
        if (
          state.failKind &&
          kind === state.failKind &&
          ['patch', 'update', 'patchStatus', 'updateStatus'].includes(String(prop))
        )
          throw new ApiError('Unavailable', 'injected: the server did not answer');
        try {
          return await v.apply(target, args);
        } catch (e) {
          if (isApiError(e, 'Conflict')) state.conflicts++;
          throw e;
        }
      };
    },
  });
  return { client, state };
}
