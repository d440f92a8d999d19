// P7 as a transition, checked on every pod event: the controllers (and doctor, at a repair point)
// never release a pool pod (to Idle, or by deleting it) while a live claim references it; a label
// naming another claim, or a claim migrating from its own pod, never takes a pod away.
import { podNameOf, sourcePodOf } from '../api/claim-binding.ts';
import { LABEL_POOL } from '../api/constants.ts';
import { keyOf, keyString } from '../api/meta.ts';
import type { WatchEventType } from '../api/ports.ts';
import type { Pod } from '../api/types.ts';
import type { ApiModel } from '../model/api-model.ts';
import { stateOf } from '../pool/pods.ts';
import type { Action } from './actions.ts';
import type { SimViolation } from './repair-point.ts';

/** Actions in which the controllers (and, at a repair point, doctor) write. */
const CONTROLLER_ACTIONS = new Set<Action['t'] | undefined>(['reconcile', 'reconcileCrash', 'quiesce']);

/** Watches the model's pods; `current` is the action being applied, `report` takes a violation. */
export function watchReleases(
  model: ApiModel,
  current: () => Action['t'] | undefined,
  report: (v: SimViolation) => void,
): void {
  const podStates = new Map<string, { state: string | undefined; deleting: boolean }>();
  model.watch('Pod', {}, { onEvent: (e) => checkRelease(e.type, e.object as Pod) });

  function checkRelease(type: WatchEventType, p: Pod): void {
    const k = keyString(keyOf(p));
    const prev = podStates.get(k);
    if (type === 'DELETED') {
      podStates.delete(k);
      return;
    }
    const cur = { state: stateOf(p), deleting: Boolean(p.metadata.deletionTimestamp) };
    podStates.set(k, cur);
    if (!prev || !p.metadata.labels?.[LABEL_POOL] || !CONTROLLER_ACTIONS.has(current())) return;
    const released = (cur.state === 'Idle' && prev.state !== 'Idle') || (cur.deleting && !prev.deleting);
    if (!released) return;
    const name = p.metadata.name;
    const holder = model
      .peek('PodClaim')
      .find(
        (c) =>
          !c.metadata.deletionTimestamp &&
          (c.metadata.namespace ?? '') === (p.metadata.namespace ?? '') &&
          (podNameOf(c) === name || sourcePodOf(c) === name),
      );
    if (!holder) return;
    report({
      invariant: 'P7',
      message: `pod ${name} was released (${cur.deleting ? 'deleted' : 'Idle'}) during '${current()}' while claim ${holder.metadata.name} references it (podName ${podNameOf(holder) || '-'}, sourcePod ${sourcePodOf(holder) || '-'})`,
      objects: [`Pod/${k}`, `PodClaim/${keyString(keyOf(holder))}`],
    });
  }
}
