// Gathers a doctor snapshot through the Reader port and runs rounds of repairs through the Client
// port: diagnose -> plan -> apply -> read again, until nothing fixable is left (or no progress).

import type { Write } from '../api/decision.ts';
import { ApiError, getOrUndefined } from '../api/errors.ts';
import type { Client, Reader } from '../api/ports.ts';
import { applyDecision, type EventRecorder } from '../reconcile/apply.ts';
import {
  claimContext,
  type DoctorOptions,
  type DoctorSnapshot,
  diagnose,
  type Finding,
  podFindings,
} from './checks.ts';
import { planRepairs, type Repair } from './repair.ts';

export async function gatherDoctorSnapshot(
  reader: Reader,
  opts: { namespace?: string; now: number },
): Promise<DoctorSnapshot> {
  const lo = opts.namespace ? { namespace: opts.namespace } : {};
  const [captures, pools, claims, claimSets, pods] = await Promise.all([
    reader.list('Capture', lo),
    reader.list('PodPool', lo),
    reader.list('PodClaim', lo),
    reader.list('PodClaimSet', lo),
    reader.list('Pod', lo),
  ]);
  return {
    captures: captures.items,
    pools: pools.items,
    claims: claims.items,
    claimSets: claimSets.items,
    pods: pods.items,
    now: opts.now,
  };
}

export interface AppliedRepair {
  finding: Finding;
  writes: Write[];
  applied: number;
  /** The write that failed (Conflict: the object changed since it was read; the next round re-plans). */
  failed?: { write: Write; error: ApiError };
}

export interface DoctorRun {
  /** Findings before any repair. */
  findings: Finding[];
  /** Repairs, per round (dry run: the first round's plan, nothing applied). */
  rounds: AppliedRepair[][];
  /** Findings after the last round (equal to `findings` when not fixing). */
  remaining: Finding[];
}

export interface RunDoctorOptions extends DoctorOptions {
  namespace?: string;
  now: () => number;
  fix?: boolean;
  dryRun?: boolean;
  maxRounds?: number;
  recorder?: EventRecorder;
}

export async function runDoctor(client: Client, opts: RunDoctorOptions): Promise<DoctorRun> {
  const gather = () =>
    gatherDoctorSnapshot(client, {
      ...(opts.namespace ? { namespace: opts.namespace } : {}),
      now: opts.now(),
    });
  let snap = await gather();
  const findings = diagnose(snap, opts);
  const run: DoctorRun = { findings, rounds: [], remaining: findings };
  if (!opts.fix) return run;
  let current = findings;
  for (let round = 0; round < (opts.maxRounds ?? 8); round++) {
    const plan = planRepairs(snap, current);
    if (plan.repairs.length === 0) break;
    if (opts.dryRun) {
      run.rounds.push(
        plan.repairs.map((r: Repair) => ({ finding: r.finding, writes: r.decision.writes, applied: 0 })),
      );
      return run;
    }
    const done: AppliedRepair[] = [];
    for (const r of plan.repairs) {
      const changed = await changedSinceCheck(client, r);
      if (changed) {
        done.push({
          finding: r.finding,
          writes: r.decision.writes,
          applied: 0,
          failed: { write: r.decision.writes[0]!, error: new ApiError('Conflict', changed) },
        });
        continue;
      }
      const res = await applyDecision(client, r.decision, opts.recorder);
      done.push({
        finding: r.finding,
        writes: r.decision.writes,
        applied: res.applied,
        ...(res.failed ? { failed: res.failed } : {}),
      });
    }
    run.rounds.push(done);
    snap = await gather();
    current = diagnose(snap, opts);
    run.remaining = current;
    if (done.every((d) => d.applied === 0)) break;
  }
  return run;
}

/**
 * For a repair of a pod's labels: read the pod live, then the claims of its namespace, and say why
 * the finding no longer holds (undefined: it does, write). Reading the pod first means a claim that
 * took the pod after this read changed the pod, so the repair's resourceVersion precondition fails.
 */
async function changedSinceCheck(client: Client, r: Repair): Promise<string | undefined> {
  if (!r.confirm) return undefined;
  const { pod: key, resourceVersion } = r.confirm;
  const pod = await getOrUndefined(client.get('Pod', key));
  if (!pod) return `pod ${key.name} is gone`;
  if (pod.metadata.resourceVersion !== resourceVersion) {
    return `pod ${key.name} changed since the check (resourceVersion ${resourceVersion} -> ${pod.metadata.resourceVersion})`;
  }
  const claims = (await client.list('PodClaim', { namespace: key.namespace })).items;
  if (podFindings(pod, claimContext(claims)).some((f) => f.code === r.finding.code)) return undefined;
  return `a live read of pod ${key.name} and the claims no longer shows ${r.finding.code}`;
}
