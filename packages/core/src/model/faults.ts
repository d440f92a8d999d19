// Fault injection for the in-memory model: the API errors a controller must survive.
import { ApiError, type ApiErrorReason } from '../api/errors.ts';
import type { ObjectKey } from '../api/meta.ts';
import type { Kind } from '../api/types.ts';
import type { RequestVerb } from '../api/verbs.ts';
import type { Rng } from './clock.ts';

export interface FaultRule {
  verbs?: RequestVerb[];
  kinds?: Kind[];
  name?: string;
  reason: ApiErrorReason;
  /** How many times it fires (default: unlimited until removed or `untilMs`). */
  times?: number;
  /** Fires with this probability on each matching call (default 1). */
  probability?: number;
  /** Stops firing at this model time. */
  untilMs?: number;
  /**
   * For write verbs with reason Timeout: the write is applied and then the caller still gets a
   * Timeout, as when the server commits but the response is lost.
   */
  appliedBeforeError?: boolean;
}

export class FaultInjector {
  private rules: FaultRule[] = [];
  private readonly rng: Rng;
  private readonly now: () => number;
  constructor(rng: Rng, now: () => number) {
    this.rng = rng;
    this.now = now;
  }

  inject(rule: FaultRule): () => void {
    const r = { ...rule };
    this.rules.push(r);
    return () => {
      this.rules = this.rules.filter((x) => x !== r);
    };
  }

  /** Reads of one object answer NotFound for a window, as a lagging or partitioned server might. */
  notFoundFor(kind: Kind, key: ObjectKey, untilMs: number): () => void {
    return this.inject({ kinds: [kind], name: key.name, verbs: ['get'], reason: 'NotFound', untilMs });
  }

  clear(): void {
    this.rules = [];
  }

  /** Returns the rule that fires for this call, consuming one of its `times`. */
  /** While true no rule fires (the simulator's own users and kubelets are not under test). */
  suspended = false;

  check(verb: RequestVerb, kind: Kind, name: string | undefined): FaultRule | undefined {
    if (this.suspended) return undefined;
    const now = this.now();
    this.rules = this.rules.filter((r) => (r.untilMs === undefined || r.untilMs > now) && r.times !== 0);
    for (const r of this.rules) {
      if (r.verbs && !r.verbs.includes(verb)) continue;
      if (r.kinds && !r.kinds.includes(kind)) continue;
      if (r.name !== undefined && r.name !== name) continue;
      if (r.probability !== undefined && !this.rng.chance(r.probability)) continue;
      if (r.times !== undefined) r.times--;
      return r;
    }
    return undefined;
  }

  static errorFor(rule: FaultRule, verb: RequestVerb, kind: Kind, name: string | undefined): ApiError {
    const what = `${verb} ${kind}${name ? ` ${name}` : ''}`;
    return new ApiError(rule.reason, `injected fault: ${rule.reason} on ${what}`, {
      ...(rule.reason === 'TooManyRequests' ? { retryAfterSeconds: 1 } : {}),
    });
  }
}
