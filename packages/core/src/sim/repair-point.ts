// The simulator's repair point, for runs where damage got past the API server (admission off):
// the person with kubectl stops; the controllers run until quiet; whatever is still wrong must be
// found by `claimctl doctor`; `doctor --fix` and another quiet period must then leave every
// invariant holding and doctor with nothing to report. Each violation present when the actor
// stopped is recorded as converged by the controllers on their own, or found by doctor.
import type { Client } from '../api/ports.ts';
import type { Finding } from '../doctor/checks.ts';
import { type DoctorRun, runDoctor } from '../doctor/run.ts';
import {
  type ClusterState,
  checkConvergence,
  type InvariantId,
  type Violation,
} from '../invariants/check.ts';
import { checkFencedResults } from '../invariants/fenced-result.ts';
import { checkSelfMigrations } from '../invariants/self-migration.ts';

/** A simulator finding: an invariant, or doctor still reporting after its repair. */
export type SimViolation = Omit<Violation, 'invariant'> & {
  /**
   * 'rollout': a pool's warm buffer not restored (current template, minIdle) once quiet.
   * 'held-back': a replica's own-writes skip held a key back longer than core's OWN_WRITES_TTL_MS.
   */
  invariant: InvariantId | 'doctor' | 'rollout' | 'held-back';
};

/**
 * Every state invariant that must hold once the controllers are quiet: convergence and safety
 * (P7 leaks included), no self-migration, no unfenced result.
 */
export function quietStateViolations(s: ClusterState, now: number): SimViolation[] {
  return [...checkConvergence(s, now), ...checkSelfMigrations(s), ...checkFencedResults(s)];
}

export interface RepairRecord {
  /** Present when the actor stopped, gone once the controllers were quiet. */
  convergedByController: SimViolation[];
  /** Still present when quiet, each with the doctor codes that name one of its objects. */
  foundByDoctor: { violation: SimViolation; codes: string[] }[];
  /** Still present when quiet and named by no doctor finding. */
  undetected: SimViolation[];
  /** Doctor's findings when quiet, before --fix. */
  findings: Finding[];
  /** Violations left after doctor --fix and another quiet period. */
  afterFix: SimViolation[];
  /** Fixable findings doctor still reports after --fix and another quiet period. */
  doctorAfterFix: Finding[];
}

export interface RepairWorld {
  /** Doctor's client (an administrator; in the off mode nothing refuses it). */
  doctorClient: Client;
  namespace: string;
  now(): number;
  state(): ClusterState;
  /** Runs the controllers until quiet. */
  quiesce(): Promise<void>;
  /** History violations no snapshot can show (e.g. the capture agent accepting a reused token). */
  historyViolations(): SimViolation[];
}

const keyOfViolation = (v: SimViolation) => `${v.invariant}|${v.message}|${v.objects.join(',')}`;

export async function repairPoint(w: RepairWorld): Promise<RepairRecord> {
  const before = quietStateViolations(w.state(), w.now());
  await w.quiesce();
  const quiet = [...quietStateViolations(w.state(), w.now()), ...w.historyViolations()];
  const stillThere = new Set(quiet.map(keyOfViolation));
  // Doctor right after the controllers went quiet: anything still wrong counts as stuck.
  const doctor = (fix: boolean): Promise<DoctorRun> =>
    runDoctor(w.doctorClient, { namespace: w.namespace, now: () => w.now(), fix, stuckAfterMs: 0 });
  const { findings } = await doctor(false);
  const record: RepairRecord = {
    convergedByController: before.filter((v) => !stillThere.has(keyOfViolation(v))),
    foundByDoctor: [],
    undetected: [],
    findings,
    afterFix: [],
    doctorAfterFix: [],
  };
  for (const v of quiet) {
    const codes = findings.filter((f) => f.objects.some((o) => v.objects.includes(o))).map((f) => f.code);
    if (codes.length > 0) record.foundByDoctor.push({ violation: v, codes: [...new Set(codes)] });
    else record.undetected.push(v);
  }
  await doctor(true);
  await w.quiesce();
  record.afterFix = quietStateViolations(w.state(), w.now());
  record.doctorAfterFix = (await doctor(false)).findings.filter((f) => f.fixable);
  return record;
}

/** The record's failures as violations: undetected damage, and what --fix did not repair. */
export function repairFailures(r: RepairRecord): SimViolation[] {
  return [
    ...r.undetected.map((v) => ({
      ...v,
      message: `not found by doctor after the controllers went quiet: ${v.message}`,
    })),
    ...r.afterFix.map((v) => ({
      ...v,
      message: `still violated after doctor --fix and a quiet period: ${v.message}`,
    })),
    ...r.doctorAfterFix.map((f) => ({
      invariant: 'doctor' as const,
      message: `doctor still reports ${f.code} ${f.name} after --fix: ${f.message}`,
      objects: f.objects,
    })),
  ];
}
