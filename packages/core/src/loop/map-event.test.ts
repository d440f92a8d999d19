// Event routing, as the controller's Manager and the simulator's World both use it.
import { describe, expect, test } from 'vitest';
import type { Capture, PodClaim, PodPool } from '../api/types.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import {
  boundTo,
  capture,
  claimedBy,
  deleting,
  forPool,
  heldBy,
  idle,
  inNamespace,
  inPool,
  inSet,
  migratingFrom,
  pinnedToShard,
  pod,
  podClaim,
  podClaimSet,
  podPool,
  withLabels,
  withSelector,
  withSource,
} from '../testing/fixtures.ts';
import { mapEvent, type RoutingView } from './map-event.ts';

const NS = 'default';

function view(opts: { captures?: Capture[]; claims?: PodClaim[]; pools?: PodPool[] } = {}): RoutingView {
  const claims = opts.claims ?? [];
  return {
    captures: (ns) => (opts.captures ?? []).filter((c) => (c.metadata.namespace ?? '') === ns),
    pools: (ns) => (opts.pools ?? []).filter((p) => (p.metadata.namespace ?? '') === ns),
    references: new ClaimIndex(claims),
  };
}

const sorted = (keys: string[]) => [...keys].sort();

describe('pod events reach claims (P6)', () => {
  test('through spec.podName and spec.sourcePod, with no label on the pod', () => {
    const v = view({
      claims: [podClaim('a', boundTo('p1'), migratingFrom('p0')), podClaim('b', boundTo('p2'))],
    });
    expect(mapEvent('Pod', undefined, pod('p1'), v)).toEqual([`PodClaim|${NS}/a`]);
    expect(mapEvent('Pod', undefined, pod('p0'), v)).toEqual([`PodClaim|${NS}/a`]);
    // A deletion (no new object) routes the same way, from the last version seen.
    expect(mapEvent('Pod', pod('p2'), undefined, v)).toEqual([`PodClaim|${NS}/b`]);
  });

  test('a deleting claim still gets its pods’ events (its finalizer must finish, P3)', () => {
    const v = view({ claims: [podClaim('gone', boundTo('p1'), deleting())] });
    expect(mapEvent('Pod', undefined, pod('p1'), v)).toEqual([`PodClaim|${NS}/gone`]);
  });

  test('through the old object: a label removed in this very update still routes', () => {
    const v = view();
    const old = pod('p9', inPool('web'), claimedBy('c'));
    const cur = pod('p9', inPool('web'));
    expect(sorted(mapEvent('Pod', old, cur, v))).toEqual([`PodClaim|${NS}/c`, `PodPool|${NS}/web`]);
    // ...and a relabel reaches both the claim it left and the one it names now.
    const relabelled = pod('p9', inPool('web'), claimedBy('d'));
    expect(sorted(mapEvent('Pod', old, relabelled, v))).toEqual([
      `PodClaim|${NS}/c`,
      `PodClaim|${NS}/d`,
      `PodPool|${NS}/web`,
    ]);
    // Without the old object only the current label is left: the seed's bug.
    expect(mapEvent('Pod', undefined, cur, v)).toEqual([`PodPool|${NS}/web`]);
  });

  test('the label routes a pod no claim references yet (a bind in flight)', () => {
    expect(mapEvent('Pod', undefined, pod('p5', claimedBy('x')), view())).toEqual([`PodClaim|${NS}/x`]);
  });

  test('other namespaces are not touched', () => {
    const v = view({ claims: [podClaim('a', inNamespace('other'), boundTo('p1'))] });
    expect(mapEvent('Pod', undefined, pod('p1'), v)).toEqual([]);
  });
});

describe('an Idle pod wakes the claims of its pool still waiting for a pod', () => {
  const claims = [
    podClaim('waiting'),
    podClaim('bound', boundTo('x')),
    podClaim('elsewhere', forPool('batch')),
    podClaim('leaving', deleting()),
  ];

  test('Idle and not deleting: the waiting claims of that pool, nothing else', () => {
    const v = view({ claims });
    expect(sorted(mapEvent('Pod', undefined, pod('w1', inPool('web'), idle()), v))).toEqual([
      `PodClaim|${NS}/waiting`,
      `PodPool|${NS}/web`,
    ]);
  });

  test('a deleting or non-Idle pod, or a deletion, wakes nobody', () => {
    const v = view({ claims });
    expect(mapEvent('Pod', undefined, pod('w1', inPool('web'), idle(), deleting()), v)).toEqual([
      `PodPool|${NS}/web`,
    ]);
    expect(mapEvent('Pod', pod('w1', inPool('web'), idle()), undefined, v)).toEqual([`PodPool|${NS}/web`]);
    expect(mapEvent('Pod', undefined, pod('w2', inPool('web')), v)).toEqual([`PodPool|${NS}/web`]);
  });
});

describe('captures get their candidate pods’ and their holder’s events', () => {
  const holder = pod('holder');
  const cap = capture('snap', withSelector({ app: 'db' }), heldBy(holder));
  const v = view({ captures: [cap] });

  test('a pod the selector matches now, or matched before this update', () => {
    expect(mapEvent('Pod', undefined, pod('db-1', withLabels({ app: 'db' })), v)).toEqual([
      `Capture|${NS}/snap`,
    ]);
    expect(mapEvent('Pod', pod('db-1', withLabels({ app: 'db' })), pod('db-1'), v)).toEqual([
      `Capture|${NS}/snap`,
    ]);
    expect(mapEvent('Pod', undefined, pod('web-1', withLabels({ app: 'web' })), v)).toEqual([]);
  });

  test('the holder, whatever its labels, deleted included', () => {
    expect(mapEvent('Pod', undefined, pod('holder'), v)).toEqual([`Capture|${NS}/snap`]);
    expect(mapEvent('Pod', pod('holder'), undefined, v)).toEqual([`Capture|${NS}/snap`]);
  });
});

describe('claims, claim sets, pools and captures', () => {
  test('a claim reaches itself, its pool and its claim set', () => {
    const set = podClaimSet('set');
    const c = podClaim('a', inSet(set));
    expect(mapEvent('PodClaim', undefined, c, view())).toEqual([
      `PodClaim|${NS}/a`,
      `PodPool|${NS}/web`,
      `PodClaimSet|${NS}/set`,
    ]);
    expect(mapEvent('PodClaim', c, undefined, view())).toEqual([
      `PodClaim|${NS}/a`,
      `PodPool|${NS}/web`,
      `PodClaimSet|${NS}/set`,
    ]);
  });

  test('an owner or pool that changed: the old one hears of it too', () => {
    const old = podClaim('a', inSet(podClaimSet('old-set')), forPool('old-pool'));
    const cur = podClaim('a', forPool('web'));
    expect(sorted(mapEvent('PodClaim', old, cur, view()))).toEqual([
      `PodClaimSet|${NS}/old-set`,
      `PodClaim|${NS}/a`,
      `PodPool|${NS}/old-pool`,
      `PodPool|${NS}/web`,
    ]);
  });

  test('pools, claim sets and captures reach only themselves', () => {
    expect(mapEvent('PodPool', undefined, podPool('web'), view())).toEqual([`PodPool|${NS}/web`]);
    expect(mapEvent('PodClaimSet', podClaimSet('s'), undefined, view())).toEqual([`PodClaimSet|${NS}/s`]);
    expect(mapEvent('Capture', capture('c'), capture('c'), view())).toEqual([`Capture|${NS}/c`]);
  });

  test('a capture reaches the pools of its namespace whose spec.source names it (added, changed, deleted)', () => {
    const v = view({
      pools: [
        podPool('warm', withSource('snap')),
        podPool('cold', withSource('other')),
        podPool('plain'),
        podPool('elsewhere', withSource('snap'), inNamespace('other-ns')),
      ],
    });
    const expected = [`Capture|${NS}/snap`, `PodPool|${NS}/warm`];
    expect(mapEvent('Capture', undefined, capture('snap'), v)).toEqual(expected);
    expect(mapEvent('Capture', capture('snap'), capture('snap'), v)).toEqual(expected);
    expect(mapEvent('Capture', capture('snap'), undefined, v)).toEqual(expected);
    expect(mapEvent('Capture', undefined, capture('nobody'), v)).toEqual([`Capture|${NS}/nobody`]);
  });

  test('a pool moved to another shard (claimkit.dev/shard changed) reaches every claim of the pool', () => {
    const claims = [
      podClaim('waiting'),
      podClaim('bound', boundTo('web-1')),
      podClaim('going', boundTo('web-2'), deleting()),
      podClaim('other', forPool('cold')),
    ];
    const v = view({ claims });
    const all = [
      `PodClaim|${NS}/bound`,
      `PodClaim|${NS}/going`,
      `PodClaim|${NS}/waiting`,
      `PodPool|${NS}/web`,
    ];
    expect(sorted(mapEvent('PodPool', podPool('web'), podPool('web', pinnedToShard(1)), v))).toEqual(all);
    expect(
      sorted(mapEvent('PodPool', podPool('web', pinnedToShard(1)), podPool('web', pinnedToShard(0)), v)),
    ).toEqual(all);
    expect(sorted(mapEvent('PodPool', podPool('web', pinnedToShard(1)), podPool('web'), v))).toEqual(all);
    // A pinned pool created or deleted moves its claims between the pin's shard and the hash's.
    expect(sorted(mapEvent('PodPool', undefined, podPool('web', pinnedToShard(1)), v))).toEqual(all);
    expect(sorted(mapEvent('PodPool', podPool('web', pinnedToShard(1)), undefined, v))).toEqual(all);
    // The same pin, or an unpinned pool added: no move.
    expect(
      mapEvent('PodPool', podPool('web', pinnedToShard(1)), podPool('web', pinnedToShard(1)), v),
    ).toEqual([`PodPool|${NS}/web`]);
    expect(mapEvent('PodPool', undefined, podPool('web'), v)).not.toContain(`PodClaim|${NS}/bound`);
  });

  test('no object at all maps to nothing', () => {
    expect(mapEvent('Pod', undefined, undefined, view())).toEqual([]);
  });
});
