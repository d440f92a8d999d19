// What one controller process remembers between reconciles, beside its informer cache: the pool
// expectations, the binds in flight, the pool pod index, the pool status pacer and the record of its
// own writes. Built alike by the controller's Manager and by each simulated replica, so the simulator
// runs the same memory (a restart starts with none) and feeds it from the same informer events.
import type { InformerHandler } from '../api/ports.ts';
import type { Pod } from '../api/types.ts';
import { BindsInFlight } from '../pool/binds-in-flight.ts';
import { PoolExpectations } from '../pool/expectations.ts';
import { PoolPodIndex } from '../pool/pool-pod-index.ts';
import { POOL_STATUS_MIN_INTERVAL_MS, PoolStatusPacer } from '../pool/status-pacer.ts';
import { OWN_WRITES_TTL_MS, OwnWrites } from './own-writes.ts';

export interface ProcessMemoryOptions {
  /** How long the own-writes skip may hold a key (core's TTL; a test may hand in a broken one). */
  ownWritesTtlMs?: number;
  /** Counts-only pool status writes at most this often. */
  statusMinIntervalMs?: number;
}

export class ProcessMemory {
  /** Pool create/delete expectations (pool/expectations.ts), fed by the Pod informer's deletes. */
  readonly expectations = new PoolExpectations();
  /**
   * Pods this process's binds are writing (pool/binds-in-flight.ts): other claims try others. The
   * pod handler ends a hold as soon as the cache shows its pod changed.
   */
  readonly bindsInFlight = new BindsInFlight();
  /** Each pool's pods sorted as the Pod informer sees them change (pool/pool-pod-index.ts). */
  readonly poolPods = new PoolPodIndex();
  /** When this process last wrote each pool's status: counts alone are paced (pool/status-pacer.ts). */
  readonly statusPacer: PoolStatusPacer;
  /** The versions this process replaced itself (own-writes.ts): a reconcile does not decide on them. */
  readonly ownWrites: OwnWrites;
  /**
   * The Pod informer's handler: register it on the informer whose store the reconcilers read, so
   * the index and the expectations change with the store (its handlers run as the store changes).
   */
  readonly podHandler: InformerHandler<Pod>;

  constructor(now: () => number, opts: ProcessMemoryOptions = {}) {
    this.statusPacer = new PoolStatusPacer(opts.statusMinIntervalMs ?? POOL_STATUS_MIN_INTERVAL_MS);
    this.ownWrites = new OwnWrites(now, opts.ownWritesTtlMs ?? OWN_WRITES_TTL_MS);
    this.podHandler = {
      onAdd: (p) => {
        this.poolPods.upsert(p);
        this.bindsInFlight.observe(p);
      },
      onUpdate: (_old, p) => {
        this.poolPods.upsert(p);
        this.bindsInFlight.observe(p);
      },
      onDelete: (p) => {
        this.expectations.podDeleted(p);
        this.poolPods.remove(p);
        this.bindsInFlight.observe(p, true);
      },
    };
  }

  /** The part of the reconcilers' deps (loop/reconcilers.ts ReconcileDeps) that is this memory. */
  reconcileDeps(): PoolMemoryDeps {
    return {
      expectations: this.expectations,
      bindsInFlight: this.bindsInFlight,
      poolPods: this.poolPods,
      statusPacer: this.statusPacer,
    };
  }
}

interface PoolMemoryDeps {
  expectations: PoolExpectations;
  bindsInFlight: BindsInFlight;
  poolPods: PoolPodIndex;
  statusPacer: PoolStatusPacer;
}
