// The actions of a run, as data (a trace replays them), and how a seed's random sequence of them is
// drawn: controller steps, time, kubelets, people, faults, lagging caches, restarts, capture holders
// and the agent, legacy writers and (when on) a person with kubectl.
import type { ApiErrorReason } from '../api/errors.ts';
import type { Kind } from '../api/types.ts';
import type { RequestVerb } from '../api/verbs.ts';
import type { Rng } from '../model/clock.ts';
import { LEASE_SECONDS, WORKERS } from './cluster.ts';
import { genKubectlWrite, type KubectlOp, type KubectlWrite } from './kubectl-actor.ts';

export type Action =
  | { t: 'reconcile'; ctl: number }
  | { t: 'reconcileCrash'; ctl: number; after: number }
  | { t: 'tick'; ms: number }
  | { t: 'kubelet' }
  | { t: 'deletePod'; pool: boolean; i: number }
  | { t: 'replaceWorker'; i: number }
  | { t: 'migrate'; i: number; to: boolean }
  | { t: 'scaleSet'; replicas: number }
  /** A person changes the pool's template (the image tag): a rollout. */
  | { t: 'rollout'; image: number }
  /** A person (or an autoscaler) writes the pool's scale subresource: minIdle, 0 included. */
  | { t: 'scalePool'; minIdle: number }
  | { t: 'createClaim' }
  | { t: 'deleteClaim'; i: number }
  | { t: 'fault'; verb: RequestVerb; kind: Kind; reason: ApiErrorReason; times: number; applied: boolean }
  | { t: 'lag'; ctl: number; lag: number; reads: number }
  | { t: 'restart'; ctl: number }
  /** The replica's capture recovery sweep runs (the Manager's timer; shard 0 only). */
  | { t: 'sweep'; ctl: number }
  /** The replica's resync timer fires: every object of the reconciled kinds is queued again. */
  | { t: 'resync'; ctl: number }
  | { t: 'holder'; i: number; op: 'acquire' | 'complete' | 'fail' | 'renew' }
  | { t: 'agent'; fate: 'succeed' | 'fail' | 'hang'; down: boolean }
  | { t: 'resetCapture'; http: boolean }
  | { t: 'adversary'; i: number; j: number }
  | { t: 'stripLabel'; i: number; deletePod: boolean }
  | { t: 'kubectl'; w: KubectlWrite }
  /** A pool pod's containers exit for good (restartPolicy Never/OnFailure): phase Succeeded or Failed. */
  | { t: 'finishPod'; i: number; phase: 'Succeeded' | 'Failed' }
  /** An operator pins a pool to a shard (annotation claimkit.dev/shard), or removes the pin. */
  | { t: 'pinPool'; pool: 'web' | 'warm'; pin: number | null }
  | { t: 'quiesce' };

// NotFound is not injected on live reads: a quorum GET answering NotFound is authoritative, and
// liveness rests on it. Stale NotFound answers come from lagging caches (the `lag` action).
const FAULT_REASONS: ApiErrorReason[] = [
  'Conflict',
  'Unavailable',
  'Timeout',
  'TooManyRequests',
  'Gone',
  'Forbidden',
];
const FAULT_VERBS: RequestVerb[] = [
  'get',
  'list',
  'update',
  'patch',
  'updateStatus',
  'patchStatus',
  'create',
  'delete',
];
const FAULT_KINDS: Kind[] = ['Pod', 'PodClaim', 'Capture', 'PodClaimSet', 'PodPool'];

export function genAction(
  rng: Rng,
  // SimOptions' knobs, resolved (options.ts documents them; it imports Action from here).
  opts: {
    replicas: number;
    faultRate: number;
    adversary: boolean;
    agentDownRate: number;
    kubectlRate: number;
    kubectlOps?: readonly KubectlOp[];
    /** Drawn only when above 0, so seeds without it keep their random streams. */
    podFinishRate?: number;
    /** Drawn only when above 0 (SimOptions.poolPinRate). */
    poolPinRate?: number;
  },
): Action {
  // Drawn only with the actor on, so runs without it keep their seeds' action sequences.
  if (opts.kubectlRate > 0 && rng.next() < opts.kubectlRate)
    return { t: 'kubectl', w: genKubectlWrite(rng, opts.kubectlOps) };
  if ((opts.podFinishRate ?? 0) > 0 && rng.next() < opts.podFinishRate!)
    return { t: 'finishPod', i: rng.int(16), phase: rng.chance(0.5) ? 'Failed' : 'Succeeded' };
  if ((opts.poolPinRate ?? 0) > 0 && rng.next() < opts.poolPinRate!)
    return { t: 'pinPool', pool: rng.chance(0.5) ? 'web' : 'warm', pin: rng.chance(0.2) ? null : rng.int(4) };
  const r = rng.next();
  if (r < opts.faultRate) {
    const reason = rng.pick(FAULT_REASONS);
    return {
      t: 'fault',
      verb: rng.pick(FAULT_VERBS),
      kind: rng.pick(FAULT_KINDS),
      reason,
      times: 1 + rng.int(3),
      applied: reason === 'Timeout' && rng.chance(0.5),
    };
  }
  const x = rng.next() * 100;
  const ctl = rng.int(opts.replicas);
  if (x < 50) return { t: 'reconcile', ctl };
  if (x < 52) return { t: 'reconcileCrash', ctl, after: rng.int(3) };
  if (x < 62) return { t: 'tick', ms: rng.chance(0.05) ? (LEASE_SECONDS + 1) * 1000 : rng.int(1500) };
  if (x < 70) return { t: 'kubelet' };
  if (x < 73) return { t: 'deletePod', pool: rng.chance(0.6), i: rng.int(16) };
  if (x < 75) return { t: 'replaceWorker', i: rng.int(WORKERS) };
  if (x < 78) return { t: 'migrate', i: rng.int(8), to: rng.chance(0.3) };
  if (x < 80) return { t: 'scaleSet', replicas: rng.int(5) };
  if (x < 81) return { t: 'createClaim' };
  if (x < 82) return { t: 'deleteClaim', i: rng.int(8) };
  if (x < 84) return { t: 'lag', ctl, lag: 1 + rng.int(4), reads: 1 + rng.int(6) };
  if (x < 85) return { t: 'restart', ctl };
  if (x < 93)
    return {
      t: 'holder',
      i: rng.int(WORKERS),
      op: rng.pick(['acquire', 'complete', 'fail', 'renew'] as const),
    };
  if (x < 95)
    return {
      t: 'agent',
      fate: rng.pick(['succeed', 'succeed', 'fail', 'hang'] as const),
      down: rng.chance(opts.agentDownRate),
    };
  if (x < 96) return { t: 'resetCapture', http: rng.chance(0.5) };
  if (x < 97 && opts.adversary) return { t: 'adversary', i: rng.int(8), j: rng.int(8) };
  if (x < 98 && opts.adversary) return { t: 'stripLabel', i: rng.int(8), deletePod: rng.chance(0.5) };
  if (x >= 99.3)
    return rng.chance(0.5)
      ? { t: 'rollout', image: 1 + rng.int(3) }
      : { t: 'scalePool', minIdle: rng.int(4) };
  // The Manager's timers, from the band that is otherwise a reconcile (no draw of their own, so a
  // seed's random stream is unchanged).
  if (x >= 98.65) return { t: 'resync', ctl };
  if (x >= 98) return { t: 'sweep', ctl };
  return { t: 'reconcile', ctl };
}
