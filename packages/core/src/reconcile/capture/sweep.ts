// The recovery sweep (default every 30 s): from one list, leave live claims with live holders alone,
// take over dead or expired claims. Every write is fenced on the resourceVersion it listed, so any
// change since the list (a claim opened or closed, a renewed lease, a landed result) fails the
// write and the next tick re-evaluates.
import { isApiError } from '../../api/errors.ts';
import { deepEqual } from '../../api/json.ts';
import { keyString } from '../../api/meta.ts';
import type { Capture, Pod } from '../../api/types.ts';
import type { HolderLookup } from '../../capture/holder-liveness.ts';
import { applyDecision } from '../apply.ts';
import { type CaptureDeps, decideCapture, lookupHolder } from './index.ts';

export interface SweepObservation {
  captures: Capture[];
  pods: Pod[];
  holders: Map<string, HolderLookup>;
}

export interface SweepReport {
  examined: number;
  changed: string[];
  /** Writes refused because the capture changed since it was listed. */
  stale: string[];
}

export async function observeForSweep(deps: CaptureDeps, namespace?: string): Promise<SweepObservation> {
  const opts = namespace ? { namespace } : {};
  const captures = (await deps.client.list('Capture', opts)).items;
  const pods = (await deps.client.list('Pod', opts)).items;
  const holders = new Map<string, HolderLookup>();
  for (const c of captures) {
    const claim = c.status?.claim;
    if (!claim) continue;
    const ns = c.metadata.namespace ?? '';
    holders.set(
      keyString({ namespace: ns, name: c.metadata.name }),
      await lookupHolder(deps, ns, claim.holder.name, pods),
    );
  }
  return { captures, pods, holders };
}

export async function applySweep(deps: CaptureDeps, obs: SweepObservation): Promise<SweepReport> {
  const report: SweepReport = { examined: 0, changed: [], stale: [] };
  for (const c of obs.captures) {
    if (!c.status?.claim) continue; // unclaimed captures are the reconciler's
    report.examined++;
    const ns = c.metadata.namespace ?? '';
    const key = keyString({ namespace: ns, name: c.metadata.name });
    const holder = obs.holders.get(key);
    const d = decideCapture(
      {
        capture: c,
        pods: obs.pods.filter((p) => (p.metadata.namespace ?? '') === ns),
        ...(holder ? { holder } : {}),
        now: deps.now(),
      },
      deps.rules,
    );
    // The sweep only arbitrates the claim; backend progress is the reconciler's.
    const writes = d.writes.filter(
      (w) =>
        w.op === 'updateStatus' &&
        !deepEqual((w.object as Capture).status?.claim, c.status?.claim) &&
        (w.object as Capture).status?.claim?.token !== c.status?.claim?.token,
    );
    if (writes.length === 0) continue;
    const res = await applyDecision(deps.client, { ...d, writes }, deps.recorder);
    if (res.failed) {
      if (isApiError(res.failed.error, 'Conflict')) report.stale.push(key);
      else throw res.failed.error;
    } else report.changed.push(key);
  }
  return report;
}

export async function sweepCaptures(deps: CaptureDeps, namespace?: string): Promise<SweepReport> {
  return applySweep(deps, await observeForSweep(deps, namespace));
}
