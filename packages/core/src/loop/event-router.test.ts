// The event router, as the controller's Manager and the simulator's World both drive it: the claim
// index kept before routing, mapEvent, the status-only predicate, pool coalescing and Node routing.
import { describe, expect, test } from 'vitest';
import type { AnyObject, Capture, PodClaim, PodPool } from '../api/types.ts';
import {
  boundTo,
  cordoned,
  createdAt,
  idle,
  inPool,
  node,
  nodeNotReady,
  pod,
  podClaim,
  podPool,
  withMinIdle,
} from '../testing/fixtures.ts';
import { coalesceDerivedPoolKeys, hasIdleHeadroom } from './coalesce.ts';
import { EventRouter, type EventRouterOptions, ROUTER_RULES } from './event-router.ts';
import { servingChanged } from './node-routing.ts';
import type { RoutedKey } from './routed-key.ts';
import { isStatusOnlyChange, statusOnlyChange } from './status-only-change.ts';

const NS = 'default';
const COALESCE = 500;

function router(
  opts: { claims?: PodClaim[]; pools?: PodPool[]; captures?: Capture[] } & Partial<EventRouterOptions> = {},
) {
  const sent: string[] = [];
  const inNs = <T extends AnyObject>(xs: T[] | undefined, ns: string) =>
    (xs ?? []).filter((o) => (o.metadata.namespace ?? '') === ns);
  const r = new EventRouter({
    view: {
      captures: (ns) => inNs(opts.captures, ns),
      pools: (ns) => inNs(opts.pools, ns),
    },
    allPools: () => opts.pools ?? [],
    coalesceMs: COALESCE,
    sink: {
      enqueue: (k) => sent.push(`${k} now`),
      enqueueAfter: (k, ms) => sent.push(`${k} +${ms}`),
    },
    ...(opts.rules ? { rules: opts.rules } : {}),
    ...(opts.headroomCoalesceMs !== undefined ? { headroomCoalesceMs: opts.headroomCoalesceMs } : {}),
    ...(opts.idleOf ? { idleOf: opts.idleOf } : {}),
  });
  // The claims the router already saw through the PodClaim watch.
  for (const c of opts.claims ?? []) r.references.upsert(c);
  return { r, sent };
}

const withStatus =
  (status: PodPool['status']) =>
  (p: PodPool): void => {
    p.status = status;
  };
const rv =
  (v: string) =>
  (o: AnyObject): void => {
    o.metadata.resourceVersion = v;
  };

describe('the claim index', () => {
  test('is kept from PodClaim events before they are routed, and forgets deleted claims', () => {
    const { r } = router();
    const c = podClaim('a', boundTo('p1'));
    r.route('PodClaim', undefined, c);
    expect(r.references.referencingIncludingDeleting(NS, 'p1').map((x) => x.claim.metadata.name)).toEqual([
      'a',
    ]);
    // A pod event now reaches the claim through the index (no label on the pod).
    expect(r.route('Pod', undefined, pod('p1')).map((k) => k.key)).toEqual([`PodClaim|${NS}/a`]);
    r.route('PodClaim', c, undefined);
    expect(r.references.referencingIncludingDeleting(NS, 'p1')).toEqual([]);
  });
});

describe('own keys go at once; derived pool keys are coalesced', () => {
  test("a claim's own key at once; its pool's after the coalescing window", () => {
    const { r, sent } = router();
    const keys = r.route('PodClaim', undefined, podClaim('a'));
    expect(keys).toEqual<RoutedKey[]>([
      { key: `PodClaim|${NS}/a`, own: true, delayMs: 0 },
      { key: `PodPool|${NS}/web`, own: false, delayMs: COALESCE },
    ]);
    expect(sent).toEqual([`PodClaim|${NS}/a now`, `PodPool|${NS}/web +${COALESCE}`]);
  });

  test('a pod change: its pool coalesced, the claims it wakes at once', () => {
    const { r, sent } = router({ claims: [podClaim('waiting')] });
    r.route('Pod', undefined, pod('w1', inPool('web'), idle()));
    expect(sent.sort()).toEqual([`PodClaim|${NS}/waiting now`, `PodPool|${NS}/web +${COALESCE}`]);
  });

  const pending = (c: PodClaim) => {
    c.status = { phase: 'Pending' };
  };

  test('an Idle pod wakes the claims told to wait among as many of the oldest as the pool has Idle pods', () => {
    // w0 has not been reconciled yet (no status: its creation queued it); w1 and w2 were told to wait.
    const claims = [
      podClaim('w3', createdAt(3), pending),
      podClaim('w1', createdAt(1), pending),
      podClaim('w2', createdAt(2), pending),
      podClaim('w0', createdAt(0)),
    ];
    const { r, sent } = router({ claims, idleOf: () => 3 });
    r.route('Pod', undefined, pod('p1', inPool('web'), idle()));
    expect(sent.filter((k) => k.startsWith('PodClaim')).sort()).toEqual([
      `PodClaim|${NS}/w1 now`,
      `PodClaim|${NS}/w2 now`,
    ]);
  });

  test('a claim that stops waiting wakes the oldest waiting claims (they move up a turn)', () => {
    const waiting = podClaim('a', createdAt(0));
    const { r, sent } = router({
      claims: [waiting, podClaim('b', createdAt(1), pending), podClaim('c', createdAt(2), pending)],
      idleOf: () => 1,
    });
    r.route('PodClaim', waiting, podClaim('a', createdAt(0), boundTo('p1')));
    expect(sent.filter((k) => k.startsWith('PodClaim')).sort()).toEqual([
      `PodClaim|${NS}/a now`,
      `PodClaim|${NS}/b now`,
    ]);
  });

  test("a pool's own spec change at once", () => {
    const { r, sent } = router();
    r.route(
      'PodPool',
      podPool('web', rv('1')),
      podPool('web', rv('2'), (p) => {
        p.spec.minIdle = 5;
      }),
    );
    expect(sent).toEqual([`PodPool|${NS}/web now`]);
  });

  test("a pool's own status-only change is coalesced (the status-only predicate)", () => {
    const { r, sent } = router();
    const before = podPool('web', rv('1'));
    const after = podPool('web', rv('2'), withStatus({ idle: 3 } as PodPool['status']));
    r.route('PodPool', before, after);
    expect(sent).toEqual([`PodPool|${NS}/web +${COALESCE}`]);
  });

  test('additions and deletions of a pool are its own changes', () => {
    const { r, sent } = router();
    r.route('PodPool', undefined, podPool('web'));
    r.route('PodPool', podPool('web'), undefined);
    expect(sent).toEqual([`PodPool|${NS}/web now`, `PodPool|${NS}/web now`]);
  });
});

describe('isStatusOnlyChange', () => {
  test('status and version stamps only', () => {
    const a = podPool('web', rv('1'));
    expect(isStatusOnlyChange(a, podPool('web', rv('2'), withStatus({ idle: 1 } as PodPool['status'])))).toBe(
      true,
    );
    expect(
      isStatusOnlyChange(
        a,
        podPool('web', rv('2'), (p) => {
          p.spec.minIdle = 9;
        }),
      ),
    ).toBe(false);
    expect(
      isStatusOnlyChange(
        a,
        podPool('web', rv('2'), (p) => {
          p.metadata.labels = { x: 'y' };
        }),
      ),
    ).toBe(false);
    expect(isStatusOnlyChange(undefined, a)).toBe(false);
    expect(isStatusOnlyChange(a, undefined)).toBe(false);
  });

  test('the step leaves other kinds and non-own keys alone', () => {
    const c = podClaim('a');
    const e = { kind: 'PodClaim' as const, before: c, after: c };
    const k = { key: `PodClaim|${NS}/a`, own: true, delayMs: 0 };
    expect(statusOnlyChange(e, k, { coalesceMs: COALESCE })).toBe(k);
  });
});

describe('coalescing', () => {
  test('delays derived PodPool keys only, never shortens a delay', () => {
    const e = { kind: 'Pod' as const, before: undefined, after: pod('x') };
    const s = { coalesceMs: COALESCE };
    expect(coalesceDerivedPoolKeys(e, { key: 'PodPool|a/b', own: false, delayMs: 0 }, s)?.delayMs).toBe(
      COALESCE,
    );
    expect(coalesceDerivedPoolKeys(e, { key: 'PodPool|a/b', own: false, delayMs: 900 }, s)?.delayMs).toBe(
      900,
    );
    expect(coalesceDerivedPoolKeys(e, { key: 'PodPool|a/b', own: true, delayMs: 0 }, s)?.delayMs).toBe(0);
    expect(coalesceDerivedPoolKeys(e, { key: 'PodClaim|a/b', own: false, delayMs: 0 }, s)?.delayMs).toBe(0);
  });
});

describe('pools with Idle headroom wait longer on their pods and claims', () => {
  const HEADROOM = 2000;
  const withIdle = (idle: number, pools = [podPool('web', withMinIdle(10))]) =>
    router({ pools, headroomCoalesceMs: HEADROOM, idleOf: (_ns, p) => (p === 'web' ? idle : 0) });
  const poolDelay = (keys: RoutedKey[]) => keys.find((k) => k.key === `PodPool|${NS}/web`)?.delayMs;

  test('headroom: Idle pods less waiting claims reach max(16, minIdle / 2)', () => {
    const small = podPool('web', withMinIdle(10));
    expect(hasIdleHeadroom(small, 16, 0)).toBe(true);
    expect(hasIdleHeadroom(small, 15, 0)).toBe(false);
    expect(hasIdleHeadroom(small, 16, 1)).toBe(false);
    expect(hasIdleHeadroom(small, 17, 1)).toBe(true);
    const big = podPool('web', withMinIdle(101));
    expect(hasIdleHeadroom(big, 50, 0)).toBe(false);
    expect(hasIdleHeadroom(big, 51, 0)).toBe(true);
  });

  test("a bind's pod change: the headroom window with Idle to spare, the short one without", () => {
    const bound = pod('p1', inPool('web'));
    expect(poolDelay(withIdle(40).r.route('Pod', pod('p1', inPool('web'), idle()), bound))).toBe(HEADROOM);
    expect(poolDelay(withIdle(15).r.route('Pod', pod('p1', inPool('web'), idle()), bound))).toBe(COALESCE);
  });

  test('a new claim counts as waiting: it takes one Idle pod off the headroom', () => {
    expect(poolDelay(withIdle(17).r.route('PodClaim', undefined, podClaim('a')))).toBe(HEADROOM);
    expect(poolDelay(withIdle(16).r.route('PodClaim', undefined, podClaim('a')))).toBe(COALESCE);
  });

  test("nodes keep the short window; the pool's own status change waits as its pods do; spec at once", () => {
    const { r } = withIdle(100, [podPool('web', withMinIdle(10), withStatus({ idle: 1 }), rv('1'))]);
    expect(poolDelay(r.route('Node', node('n1'), node('n1', nodeNotReady())))).toBe(COALESCE);
    const before = podPool('web', withMinIdle(10), withStatus({ idle: 1 }), rv('1'));
    expect(
      poolDelay(
        r.route('PodPool', before, podPool('web', withMinIdle(10), withStatus({ idle: 2 }), rv('2'))),
      ),
    ).toBe(HEADROOM);
    expect(poolDelay(r.route('PodPool', before, podPool('web', withMinIdle(12), rv('2'))))).toBe(0);
  });

  test('without a headroom window or an Idle count, every pool waits the short window', () => {
    const noWindow = router({ pools: [podPool('web', withMinIdle(10))], idleOf: () => 1000 });
    expect(poolDelay(noWindow.r.route('Pod', undefined, pod('p1', inPool('web'))))).toBe(COALESCE);
    const noCount = router({ pools: [podPool('web', withMinIdle(10))], headroomCoalesceMs: HEADROOM });
    expect(poolDelay(noCount.r.route('Pod', undefined, pod('p1', inPool('web'))))).toBe(COALESCE);
  });

  test('an unknown pool has no headroom', () => {
    const { r } = withIdle(100, []);
    expect(poolDelay(r.route('Pod', undefined, pod('p1', inPool('web'))))).toBe(COALESCE);
  });
});

describe('Node routing', () => {
  const pools = [
    podPool('web'),
    podPool('batch', (p) => {
      p.metadata.namespace = 'other';
    }),
  ];

  test('a node that stops or starts serving: every pool, in every namespace, coalesced', () => {
    const { r, sent } = router({ pools });
    r.route('Node', node('n1'), node('n1', cordoned()));
    expect(sent).toEqual([`PodPool|${NS}/web +${COALESCE}`, `PodPool|other/batch +${COALESCE}`]);
    sent.length = 0;
    r.route('Node', node('n1', nodeNotReady()), node('n1'));
    expect(sent).toHaveLength(2);
  });

  test('a change that keeps serving as it was reaches nobody; an unknown node counts as serving', () => {
    const { r } = router({ pools });
    expect(
      r.route(
        'Node',
        node('n1'),
        node('n1', (n) => {
          n.metadata.labels = { a: 'b' };
        }),
      ),
    ).toEqual([]);
    expect(r.route('Node', undefined, node('n2'))).toEqual([]);
    expect(r.route('Node', node('n2'), undefined)).toEqual([]);
    expect(r.route('Node', undefined, node('n3', cordoned()))).toHaveLength(2);
    expect(servingChanged(node('n3', cordoned()), undefined)).toBe(true);
  });
});

describe('rules are data', () => {
  test('a step that drops a key: nothing reaches the sink', () => {
    const { r, sent } = router({ rules: { coalesce: () => undefined } });
    expect(r.route('PodClaim', undefined, podClaim('a'))).toEqual([]);
    expect(sent).toEqual([]);
  });

  test("core's rules by default", () => {
    expect(ROUTER_RULES.statusOnlyChange).toBe(statusOnlyChange);
    expect(ROUTER_RULES.coalesce).toBe(coalesceDerivedPoolKeys);
  });
});
