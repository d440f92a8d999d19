// The SLIs of issue 23, measured by the controller from the objects' own timestamps and its cache
// (never per claim: every label set is per pool, backend, layer or check):
// - claim transitions seen by the PodClaim informer's update events while leading (so the initial
//   list after a restart observes nothing again, and a standby nothing at all): created -> first
//   Bound, Lost -> Bound, -> Lost;
// - Capture results seen by the Capture informer's update events: claim acquired -> result written;
// - gauges computed from the cache once per scrape: pending claims, pool pods by state, targets;
// - binds, releases and recycles counted from the intents of this controller's applied writes
//   (core's WriteIntent), takeovers and migrations from the structured detail of the Events its
//   reconcilers record (core's EventDetail): never from a patch's shape or an Event's text;
// - fenced refusals as this controller sees them (409 on its writes, the capture agent's 409, a
//   discarded unfenced result, admission denials);
// - doctor findings per check over the cache (Manager runs refreshDoctor periodically while leading).
import {
  type ApiCall,
  type AppliedDecision,
  type Capture,
  type CaptureBackend,
  type EventSpec,
  type Interceptors,
  isApiError,
  isDeleting,
  isPodReady,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  LABEL_TEMPLATE_HASH,
  type Pod,
  type PodClaim,
  type PodPool,
  parseTimestamp,
  type Reader,
  writeTarget,
} from '@claimkit/core';
import { byNamespace, CHECKS, diagnose, gatherDoctorSnapshot } from '@claimkit/core/doctor';
import type { CacheGauges, ControllerMetrics } from './metrics.ts';

type Series = { labels: Record<string, string>; v: number }[];

const nsOf = (o: { metadata: { namespace?: string } }) => o.metadata.namespace ?? '';
const phaseOf = (c: PodClaim) => c.status?.phase ?? 'Pending';
const seconds = (ms: number) => Math.max(0, ms) / 1000;

/** `FinalizerStuck` -> `finalizer_stuck` (label values are snake_case). */
export const snakeCase = (s: string): string => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** When the claim's Bound condition last turned True (else status.boundTime). */
function boundAt(c: PodClaim): number | undefined {
  const cond = c.status?.conditions?.find((x) => x.type === 'Bound' && x.status === 'True');
  return parseTimestamp(cond?.lastTransitionTime) ?? parseTimestamp(c.status?.boundTime);
}

export class Slis {
  private readonly m: ControllerMetrics;
  /** Transitions are observed by the leader only, so replicas' histograms do not add up twice. */
  private readonly leading: () => boolean;
  /** Claims whose first bind was observed (by uid), so a claim is observed once however it flaps. */
  private readonly observedBind = new Set<string>();

  constructor(metrics: ControllerMetrics, leading: () => boolean) {
    this.m = metrics;
    this.leading = leading;
  }

  /** A PodClaim update event from the informer (never the initial list's adds). */
  claimUpdated(old: PodClaim, cur: PodClaim): void {
    if (!this.leading()) return;
    const before = phaseOf(old);
    const after = phaseOf(cur);
    if (before === after) return;
    const labels = { namespace: nsOf(cur), pool: cur.spec.poolName };
    if (after === 'Lost') this.m.lost.inc(labels);
    if (after !== 'Bound') return;
    const at = boundAt(cur);
    if (at === undefined) return;
    const uid = cur.metadata.uid ?? `${labels.namespace}/${cur.metadata.name}`;
    if (before === 'Pending' && !this.observedBind.has(uid)) {
      this.observedBind.add(uid);
      const created = parseTimestamp(cur.metadata.creationTimestamp);
      if (created !== undefined) this.m.bindSeconds.observe(seconds(at - created), labels);
    } else if (before === 'Lost') {
      const lostAt = parseTimestamp(old.status?.lostTime ?? cur.status?.lostTime);
      if (lostAt !== undefined) this.m.rebindSeconds.observe(seconds(at - lostAt), labels);
    }
  }

  claimDeleted(c: PodClaim): void {
    if (c.metadata.uid) this.observedBind.delete(c.metadata.uid);
  }

  /** A Capture update event: a result written (new completionTime) is observed once. */
  captureUpdated(old: Capture, cur: Capture): void {
    if (!this.leading()) return;
    const r = cur.status?.result;
    if (!r || r.completionTime === old.status?.result?.completionTime) return;
    const claim = cur.status?.claim ?? old.status?.claim;
    const from = parseTimestamp(claim?.acquireTime);
    const to = parseTimestamp(r.completionTime);
    if (from === undefined || to === undefined) return;
    this.m.captureSeconds.observe(seconds(to - from), {
      namespace: nsOf(cur),
      backend: cur.spec.backend?.type ?? '',
    });
  }

  /** claimkit_claims by phase, from the cache's claims. */
  claimPhases(claims: PodClaim[]): Record<string, number> {
    const out: Record<string, number> = { Pending: 0, Bound: 0, Migrating: 0, Lost: 0 };
    for (const c of claims) out[phaseOf(c)] = (out[phaseOf(c)] ?? 0) + 1;
    return out;
  }

  /** The cache-backed gauges, from the cache's pools, pods and claims. */
  cacheGauges(view: { pools: PodPool[]; pods: Pod[]; claims: PodClaim[]; now: number }): CacheGauges {
    const pending = new Map<string, { ns: string; pool: string; n: number; oldest: number }>();
    const entry = (ns: string, pool: string) => {
      const k = `${ns}/${pool}`;
      const known = pending.get(k);
      if (known) return known;
      const e = { ns, pool, n: 0, oldest: 0 };
      pending.set(k, e);
      return e;
    };
    // Every pool has a series (0 when nothing waits), so `> 0` alerts resolve.
    for (const p of view.pools) entry(nsOf(p), p.metadata.name);
    for (const c of view.claims) {
      if (phaseOf(c) !== 'Pending' || isDeleting(c)) continue;
      const e = entry(nsOf(c), c.spec.poolName);
      e.n++;
      const created = parseTimestamp(c.metadata.creationTimestamp);
      if (created !== undefined) e.oldest = Math.max(e.oldest, seconds(view.now - created));
    }
    const out: Required<CacheGauges> = {
      pending: [],
      oldestPending: [],
      poolPods: [],
      targetIdle: [],
      maxPods: [],
      headroom: [],
    };
    for (const e of pending.values()) {
      const labels = { namespace: e.ns, pool: e.pool };
      out.pending.push({ labels, v: e.n });
      out.oldestPending.push({ labels, v: e.oldest });
    }
    const podsByPool = new Map<string, Pod[]>();
    for (const p of view.pods) {
      const pool = p.metadata.labels?.[LABEL_POOL];
      if (pool === undefined) continue;
      const k = `${nsOf(p)}/${pool}`;
      const list = podsByPool.get(k);
      if (list) list.push(p);
      else podsByPool.set(k, [p]);
    }
    for (const pool of view.pools) {
      const labels = { namespace: nsOf(pool), pool: pool.metadata.name };
      const pods = podsByPool.get(`${labels.namespace}/${labels.pool}`) ?? [];
      const states = { idle: 0, starting: 0, bound: 0, draining: 0, outdated: 0 };
      const hash = pool.status?.templateHash;
      for (const p of pods) {
        if (isDeleting(p)) continue;
        const state = p.metadata.labels?.[LABEL_STATE];
        const claimed = !!p.metadata.labels?.[LABEL_CLAIMED_BY];
        if (state === 'Draining') states.draining++;
        else if (state === 'Bound' || claimed) states.bound++;
        else if (state === 'Idle') states[isPodReady(p) ? 'idle' : 'starting']++;
        if (hash && p.metadata.labels?.[LABEL_TEMPLATE_HASH] !== hash) states.outdated++;
      }
      for (const [state, v] of Object.entries(states)) out.poolPods.push({ labels: { ...labels, state }, v });
      out.targetIdle.push({ labels, v: pool.spec.minIdle ?? 0 });
      if (typeof pool.spec.maxPods === 'number') {
        out.maxPods.push({ labels, v: pool.spec.maxPods });
        // scaling.ts: every pool pod the cache shows counts against maxPods, terminating ones too.
        out.headroom.push({ labels, v: pool.spec.maxPods - pods.length });
      }
    }
    return out;
  }

  /** Counts the fenced refusals this controller's writes meet (reads are never refusals). */
  refusalInterceptors(): Interceptors {
    return {
      request: async (call: ApiCall, next) => {
        try {
          return await next();
        } catch (e) {
          if (call.verb !== 'get' && call.verb !== 'list') this.refused(e);
          throw e;
        }
      },
    };
  }

  /**
   * The pool-pod writes of a reconcile step's applied decisions, counted by their intent (core's
   * WriteIntent): binds, releases and recycles. Only the writes that landed (a decision stops at
   * its first failure); a delete of a pod already gone released nothing.
   */
  applied(decisions: readonly AppliedDecision[]): void {
    for (const { decision, result } of decisions) {
      for (let i = 0; i < result.applied; i++) {
        const w = decision.writes[i]!;
        if (!w.intent) continue;
        if (result.alreadyGone?.includes(i)) continue;
        const l = { namespace: writeTarget(w).key.namespace, pool: w.intent.pool };
        if (w.intent.act === 'bind') this.m.binds.inc(l);
        else if (w.intent.act === 'release') {
          this.m.releases.inc(l);
          if (w.intent.recycled) this.m.recycles.inc(l);
        }
      }
    }
  }

  /** A write refused: by the API server's fencing (409 Conflict) or by admission. */
  private refused(e: unknown): void {
    if (!isApiError(e)) return;
    if (e.reason === 'Conflict') this.m.fencedRefusals.inc({ layer: 'api_conflict' });
    else if (/ValidatingAdmissionPolicy/i.test(e.message)) this.m.fencedRefusals.inc({ layer: 'policy' });
    else if (/admission webhook .* denied/i.test(e.message)) this.m.fencedRefusals.inc({ layer: 'webhook' });
  }

  /** The capture backend, counting the agent's fencing refusals (409 for a stale token). */
  countAgentRefusals(backend: CaptureBackend): CaptureBackend {
    const watch = async <T>(p: Promise<T>): Promise<T> => {
      try {
        return await p;
      } catch (e) {
        if (isApiError(e) && e.code === 409) this.m.fencedRefusals.inc({ layer: 'capture_agent' });
        throw e;
      }
    };
    return {
      start: (url, req) => watch(backend.start(url, req)),
      poll: (url, id, req) => watch(backend.poll(url, id, req)),
    };
  }

  /** An Event a reconciler recorded: takeovers, migrations finished, unfenced results discarded. */
  recorded(e: EventSpec): void {
    if (e.reason === 'ResultDiscarded') this.m.fencedRefusals.inc({ layer: 'result_fence' });
    const d = e.detail;
    if (d && 'takeover' in d) this.m.takeovers.inc({ reason: d.takeover });
    if (d && 'migration' in d)
      this.m.migrations.inc({ namespace: e.regarding.namespace, pool: d.pool, result: d.migration });
  }

  /**
   * Runs core's doctor checks over the cache and sets the findings gauge (every check, 0 when clean),
   * one namespace at a time with a turn of the event loop between them: in one piece, the pass over
   * 37,000 pods in 13 namespaces held every reconcile up once a minute (issue 22's p99 stalls of
   * 0.4–0.9 s, 60 s apart).
   */
  async refreshDoctor(reader: Reader, opts: { namespace?: string; now: number }): Promise<void> {
    const snap = await gatherDoctorSnapshot(reader, opts);
    const counts = new Map<string, number>(Object.values(CHECKS).map((c) => [snakeCase(c.name), 0]));
    for (const part of byNamespace(snap)) {
      for (const f of diagnose(part, {})) {
        const k = snakeCase(f.name);
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const series: Series = [...counts].map(([check, v]) => ({ labels: { check }, v }));
    this.m.doctorFindings = () => series;
  }
}
