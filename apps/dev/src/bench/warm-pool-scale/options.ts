// What a warm-pool-scale run is asked to do (its load, its controller), its presets, and the
// constants of its method that more than one phase uses.
import type { warmPoolBaseline } from '../stats.ts';

export interface WarmPoolScaleOptions {
  /** Warm pods in all: the pools' minIdle add up to it. */
  warm: number;
  /** Pods the pools may create beyond `warm` while claims bind: their maxPods add up to warm + refill. */
  refill: number;
  steady: number;
  rate: number;
  burst: number;
  /** Namespaces the pools are spread over (the controller watches all namespaces when > 1). */
  namespaces: number;
  /** PodPools in all, the same number in each namespace. */
  pools: number;
  /** Poisson arrivals from a PRNG with this seed; evenly spaced without. */
  poissonSeed?: number;
  /** Where the run is stored in bench/results.json (also names its CPU profile). */
  key: string;
  /** Extra controller flags, passed through as given (e.g. --disable-claim-events). */
  controllerArgs: string[];
  /**
   * A run at another scale than the preset's is compared with the stored preset run (`baseline`,
   * when there is one) and held to the RSS limit (issue 22: flat in the number of pods).
   */
  compare?: { baseline: ReturnType<typeof warmPoolBaseline> };
  /** The controller's reconcile workers (--concurrency). */
  concurrency: number;
  /** Raw writes of each kind measured after the burst. */
  rawWrites: number;
  /**
   * Delete the namespace after (3,900 pods take minutes to go); false when the cluster is stopped
   * right after anyway.
   */
  cleanup: boolean;
  /**
   * Profile the controller's steady phase (V8, through its inspector) into this directory, and
   * summarise the profile in the results.
   */
  cpuProfDir?: string;
  /** Run the controller under this memory limit (a cgroup, as the chart's limits.memory). */
  memoryLimitBytes?: number;
  /**
   * Run this many controller processes, shard i with `--shard i/N` (default 1): CPU is reported for
   * all of them together and for the busiest; RSS per process (each caches everything).
   */
  shards?: number;
}

/** agent-sandbox's test: 3,700 warm pods, 3,600 claims at 30/s, 300 at once; maxPods = 3,600 + 300. */
export const WARM_POOL_SCALE_FULL = { warm: 3700, refill: 200, steady: 3600, rate: 30, burst: 300 } as const;
export const WARM_POOL_SCALE_QUICK = { warm: 370, refill: 20, steady: 360, rate: 30, burst: 30 } as const;

/** Pods the pools hold at most in all (and the kwok nodes must fit). */
export const warmPoolMaxPods = (o: { warm: number; refill: number }) => o.warm + o.refill;

/** The steady phase's windows: claims by arrival time, and the window probe's scrapes. */
export const WINDOW_MS = 10_000;

/** The pod the window probe patches to time the API server's answers and its pod watch's delivery. */
export const CANARY_POD = 'bench-canary';

/** Cores the control plane and the controller may use, together, for the cluster to count as settled. */
export const SETTLED_CORES = 0.3;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
