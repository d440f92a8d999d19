// The bench's own view of the run, from its watches (one per namespace and kind): every pod ever
// seen, each pool's Idle Ready pods, and per claim (`ns/name`) when its events arrived.
import {
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  type Pod,
  type PodClaim,
  podNameOf,
} from '@claimkit/core';
import { type BenchContext, isReady } from '../context.ts';
import { CANARY_ANNOTATION } from '../window-probe.ts';
import { CANARY_POD } from './options.ts';
import { poolKey, type RunPlan } from './set-up.ts';

export interface ClaimTimes {
  sentAt?: number;
  addedAt?: number;
  /** First pod event labelled claimed-by this claim (the bind's pod CAS landed). */
  podLabelledAt?: number;
  /** First claim event with spec.podName (the bind's spec write landed). */
  specAt?: number;
  boundAt?: number;
}

export interface PoolView {
  podsSeen: Set<string>;
  /** Per claim `ns/name`. */
  claims: Map<string, ClaimTimes>;
  idleTotal(): number;
  /** Every pool j has at least want(j) Idle Ready pods. */
  poolsHave(want: (j: number) => number): boolean;
  /** Waits until n claims were seen Bound (at most 15 min), saying the count every 15 s. */
  awaitBound(n: number, what: string): Promise<void>;
  /** Called with the canary's sequence number and arrival time (the window probe, once it runs). */
  onCanary?: (seq: number, at: number) => void;
  stop(): void;
}

/**
 * A watch that resumes from the last resourceVersion when it ends (server timeout, idle close) and
 * starts over (synthetic ADDEDs again) after an error; `onEvent` sees the arrival time.
 */
function keepWatching<K extends 'Pod' | 'PodClaim'>(
  ctx: BenchContext,
  kind: K,
  ns: string,
  onEvent: (type: string, obj: K extends 'Pod' ? Pod : PodClaim, at: number) => void,
): () => void {
  let rv = '';
  let stopped = false;
  let stop = () => {};
  const start = () => {
    if (stopped) return;
    stop = ctx.kube.watch(
      kind,
      {
        namespace: ns,
        allowWatchBookmarks: true,
        ...(rv ? { resourceVersion: rv } : {}),
        inactivityMs: 120_000,
      },
      {
        onEvent: (e) => {
          const at = performance.now();
          rv = e.object.metadata.resourceVersion ?? rv;
          onEvent(e.type, e.object as unknown as K extends 'Pod' ? Pod : PodClaim, at);
        },
        onBookmark: (v) => {
          rv = v;
        },
        onClose: (err) => {
          if (err) rv = '';
          if (!stopped) setTimeout(start, err ? 500 : 0);
        },
      },
    );
  };
  start();
  return () => {
    stopped = true;
    stop();
  };
}

export function watchPools(ctx: BenchContext, run: RunPlan): PoolView {
  const { plan, namespaces, ns } = run;
  const podsSeen = new Set<string>();
  const idleReady = new Map<string, Set<string>>(
    plan.map((p) => [poolKey(namespaces[p.namespace]!, p.name), new Set<string>()]),
  );
  const claims = new Map<string, ClaimTimes>();
  let boundCount = 0;
  const boundWaiters: Array<() => void> = [];
  const stopWatches: Array<() => void> = [];
  const view: PoolView = {
    podsSeen,
    claims,
    idleTotal: () => [...idleReady.values()].reduce((a, s) => a + s.size, 0),
    poolsHave: (want) =>
      plan.every((p, j) => (idleReady.get(poolKey(namespaces[p.namespace]!, p.name))?.size ?? 0) >= want(j)),
    awaitBound: async (n, what) => {
      const deadline = performance.now() + 900_000;
      let logged = performance.now();
      while (boundCount < n) {
        if (performance.now() - logged > 15_000) {
          logged = performance.now();
          ctx.say(`  ${what}: ${boundCount}/${n} Bound`);
        }
        if (performance.now() > deadline) throw new Error(`${what}: ${boundCount}/${n} Bound after 15 min`);
        await new Promise<void>((r) => {
          boundWaiters.push(r);
          setTimeout(r, 1000);
        });
      }
    },
    stop: () => {
      for (const stop of stopWatches.splice(0)) stop();
    },
  };
  for (const n of namespaces) {
    stopWatches.push(
      keepWatching(ctx, 'Pod', n, (type, p, at) => {
        if (n === ns && p.metadata.name === CANARY_POD) {
          const seq = Number(p.metadata.annotations?.[CANARY_ANNOTATION]);
          if (type !== 'DELETED' && Number.isInteger(seq)) view.onCanary?.(seq, at);
          return;
        }
        const name = `${n}/${p.metadata.name}`;
        podsSeen.add(name);
        const ok =
          type !== 'DELETED' &&
          !p.metadata.deletionTimestamp &&
          isReady(p) &&
          p.metadata.labels?.[LABEL_STATE] === 'Idle';
        const idle = idleReady.get(poolKey(n, p.metadata.labels?.[LABEL_POOL] ?? ''));
        if (ok) idle?.add(name);
        else for (const s of idleReady.values()) s.delete(name);
        const by = p.metadata.labels?.[LABEL_CLAIMED_BY];
        if (by && type !== 'DELETED') {
          const t = claims.get(`${n}/${by}`) ?? {};
          claims.set(`${n}/${by}`, t);
          t.podLabelledAt ??= at;
        }
      }),
      keepWatching(ctx, 'PodClaim', n, (type, c, at) => {
        const key = `${n}/${c.metadata.name}`;
        const t = claims.get(key) ?? {};
        claims.set(key, t);
        if (t.addedAt === undefined) t.addedAt = at;
        if (type !== 'DELETED' && podNameOf(c)) t.specAt ??= at;
        if (type !== 'DELETED' && t.boundAt === undefined && c.status?.phase === 'Bound' && podNameOf(c)) {
          t.boundAt = at;
          boundCount++;
          for (const w of boundWaiters.splice(0)) w();
        }
      }),
    );
  }
  return view;
}
