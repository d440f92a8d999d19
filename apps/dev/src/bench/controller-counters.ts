// What one in-process controller did, read from its own Prometheus registry: API requests by verb,
// kind and code, and PodClaim reconciles; the binds benchmark diffs two snapshots.
import { type createKubeController, WRITE_VERBS } from '@claimkit/controller';
import { r1 } from './context.ts';

type Controller = ReturnType<typeof createKubeController>;

/** Counters of one controller's API requests, as `verb Kind code` -> n. */
function requestCounts(ctl: Controller): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of ctl.manager.metrics.registry.render().split('\n')) {
    const mm = /^claimkit_api_requests_total\{code="(\d+)",resource="(\w+)",verb="(\w+)"\} (\d+)/.exec(line);
    if (mm) out[`${mm[3]} ${mm[2]} ${mm[1]}`] = (out[`${mm[3]} ${mm[2]} ${mm[1]}`] ?? 0) + Number(mm[4]);
  }
  return out;
}

function metricSum(ctl: Controller, metric: string, kind: string, result?: string): number {
  let n = 0;
  for (const line of ctl.manager.metrics.registry.render().split('\n'))
    if (
      line.startsWith(metric) &&
      line.includes(`kind="${kind}"`) &&
      (result === undefined || line.includes(`result="${result}"`))
    )
      n += Number(line.split(' ').at(-1));
  return n;
}

const isWriteVerb = (v: string) => WRITE_VERBS.has(v) || v === 'updateStatus' || v === 'patchStatus';

export type Counters = ReturnType<typeof counters>;

export function counters(ctl: Controller) {
  return {
    requests: requestCounts(ctl),
    reconciles: metricSum(ctl, 'claimkit_reconcile_total', 'PodClaim'),
    cacheBehind: metricSum(ctl, 'claimkit_reconcile_total', 'PodClaim', 'cache_behind'),
    reconcileSeconds: metricSum(ctl, 'claimkit_reconcile_duration_seconds_sum', 'PodClaim'),
  };
}

/** What one controller did between `before` and now, per bind. */
export function bindWork(ctl: Controller, before: Counters, binds: number) {
  const requests: Record<string, number> = {};
  for (const [k, v] of Object.entries(requestCounts(ctl))) {
    const d = v - (before.requests[k] ?? 0);
    if (d > 0) requests[k] = d;
  }
  const sum = (f: (verb: string, kind: string, code: string) => boolean) =>
    Object.entries(requests).reduce((n, [k, v]) => {
      const [verb, kind, code] = k.split(' ') as [string, string, string];
      return f(verb, kind, code) ? n + v : n;
    }, 0);
  const cacheBehind =
    metricSum(ctl, 'claimkit_reconcile_total', 'PodClaim', 'cache_behind') - before.cacheBehind;
  const reconciles = metricSum(ctl, 'claimkit_reconcile_total', 'PodClaim') - before.reconciles - cacheBehind;
  const reconcileSeconds =
    metricSum(ctl, 'claimkit_reconcile_duration_seconds_sum', 'PodClaim') - before.reconcileSeconds;
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    // The bind's own objects: its pod and its claim (the pool's coalesced status writes are apart).
    apiWritesPerBind: r2(
      sum((v, k, c) => isWriteVerb(v) && (k === 'Pod' || k === 'PodClaim') && c.startsWith('2')) / binds,
    ),
    poolStatusWrites: sum((v, k, c) => isWriteVerb(v) && k === 'PodPool' && c.startsWith('2')),
    apiWritesPerBindInclEvents: r2(sum((v, _k, c) => isWriteVerb(v) && c.startsWith('2')) / binds),
    conflicts409: sum((_v, _k, c) => c === '409'),
    podClaimReconcilesPerBind: r2(reconciles / binds),
    // Reconciles skipped because the cache still showed a version the controller itself had replaced.
    podClaimCacheBehindSkips: cacheBehind,
    meanPodClaimReconcileMs: r1((reconcileSeconds / Math.max(1, reconciles)) * 1000),
    requests,
  };
}
