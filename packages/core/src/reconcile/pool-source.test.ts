// A PodPool that starts its pods from a Capture's result (spec.source), on the in-memory API model:
// only a fenced result (capture/result-fence.ts) seeds pods; anything else creates no pods, replaces
// none (excess Idle pods still go) and says why (condition SourceReady, one Event per change); a fenced seed
// puts annotations and env on every new pod and is part of the template hash, so a new fenced
// result rolls Idle pods and outdated Bound pods are deleted on release; a Capture's change wakes
// the pools that name it.
import { describe, expect, test } from 'vitest';
import { findCondition } from '../api/conditions.ts';
import {
  ANNOTATION_SOURCE_CAPTURE,
  ANNOTATION_SOURCE_REF,
  ANNOTATION_SOURCE_TOKEN,
  ENV_SOURCE_REF,
  ENV_SOURCE_TOKEN,
  LABEL_POOL,
  LABEL_STATE,
} from '../api/constants.ts';
import { isPodReady } from '../api/pod-predicates.ts';
import type { AnyObject, Capture, Pod, PodClaim, PodPool } from '../api/types.ts';
import { acquireCapture, completeCapture } from '../capture/holder-ops.ts';
import { mapEvent, type RoutingView } from '../loop/map-event.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import { CONDITION_SOURCE_READY, SOURCE_WAIT_MS } from '../pool/source.ts';
import { isUpdatedPod, LABEL_TEMPLATE_HASH, poolTemplateHash } from '../pool/template-hash.ts';
import {
  boundTo,
  capture,
  captured,
  captureStatus,
  claimedBy,
  forPool,
  heldBy,
  idle,
  inPool,
  onNode,
  pod,
  podClaim,
  podPool,
  podTemplate,
  ready,
  refOf,
  withAnnotations,
  withLabels,
  withMinIdle,
  withReleaseFinalizer,
  withSelector,
  withSource,
  withTemplate,
} from '../testing/fixtures.ts';
import { put, putAll } from '../testing/model-helpers.ts';
import { world as harness, type World } from '../testing/world.ts';
import { reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodPool } from './podpool/index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });

/**
 * A model with the CRDs' schema. Without `fence`, the Capture's CEL rules are left out (as kubectl
 * against a cluster without them would), so a test can put any result in place, an unfenced one
 * too; with it, results come only from the holder operations' fenced writes.
 */
const world = (opts: { fence?: boolean } = {}) => harness(opts.fence ? {} : { withoutRules: ['Capture'] });

const warmPool = (...mods: Parameters<typeof podPool>[1][]) =>
  podPool('warm', withSource('snap'), withMinIdle(2), ...mods);
const snap = (...mods: Parameters<typeof capture>[1][]) =>
  capture('snap', withSelector({ app: 'w' }), ...mods);

const poolPods = (w: World): Pod[] =>
  w.model
    .listNow('Pod', { namespace: NS })
    .filter((p) => p.metadata.labels?.[LABEL_POOL] === 'warm' && !p.metadata.deletionTimestamp);
const idlePods = (w: World): Pod[] => poolPods(w).filter((p) => p.metadata.labels?.[LABEL_STATE] === 'Idle');
const sourceReady = (w: World) =>
  findCondition(w.model.getNow('PodPool', key('warm')).status?.conditions, CONDITION_SOURCE_READY);
const envOf = (c: { [field: string]: unknown }) =>
  Object.fromEntries(((c.env ?? []) as { name: string; value?: string }[]).map((e) => [e.name, e.value]));

const warmAll = (w: World) => w.warm(poolPods(w));

/** Reconciles the pool `rounds` times, completing deletions and warming pods in between. */
async function settle(w: World, rounds = 8): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await reconcilePodPool(w.deps, key('warm'));
    w.model.completePodDeletions();
    warmAll(w);
  }
}

/** What a pool with no fenced source must do: no pods, the condition's reason, an Event, a requeue. */
async function expectNoPods(w: World, reason: string, eventType: 'Normal' | 'Warning', message: RegExp) {
  const r = await reconcilePodPool(w.deps, key('warm'));
  expect(poolPods(w)).toEqual([]);
  expect(w.model.writes.some((x) => x.verb === 'create' && x.kind === 'Pod')).toBe(false);
  expect(sourceReady(w)).toMatchObject({ status: 'False', reason });
  expect(sourceReady(w)?.message).toMatch(message);
  expect(findCondition(w.model.getNow('PodPool', key('warm')).status?.conditions, 'Ready')).toMatchObject({
    status: 'False',
    reason: 'SourceNotReady',
  });
  expect(w.events.filter((e) => e.reason === reason)).toEqual([
    expect.objectContaining({
      type: eventType,
      regarding: expect.objectContaining({ kind: 'PodPool', name: 'warm' }),
    }),
  ]);
  expect(r.requeueAfterMs).toBe(SOURCE_WAIT_MS);
  // Waiting costs no writes and no further Events: the condition already says it.
  const writes = w.model.writes.length;
  await reconcilePodPool(w.deps, key('warm'));
  expect(w.model.writes.length).toBe(writes);
  expect(w.events.filter((e) => e.reason === reason)).toHaveLength(1);
}

describe('a pool whose source has no fenced result creates no pods', () => {
  test('the Capture does not exist: CaptureNotFound', async () => {
    const w = world();
    await put(w.model, warmPool());
    await expectNoPods(w, 'CaptureNotFound', 'Normal', /capture snap not found/);
  });

  test('the Capture has no result yet: NotCaptured', async () => {
    const w = world();
    await putAll(w.model, warmPool(), snap());
    await expectNoPods(w, 'NotCaptured', 'Normal', /no result yet \(phase Pending\)/);
  });

  test('a result beside an open claim is unfenced: ResultNotFenced, a Warning Event', async () => {
    const w = world();
    const holder = pod('w-1', withLabels({ app: 'w' }));
    await putAll(w.model, warmPool(), snap(captured('snap://early', { token: 1 }), heldBy(refOf(holder))));
    const c = w.model.getNow('Capture', key('snap'));
    expect(c.status).toMatchObject({ epoch: 2, claim: { token: 2 }, result: { token: 1 } });
    await expectNoPods(
      w,
      'ResultNotFenced',
      'Warning',
      /snap:\/\/early \(token 1\) of capture snap is not fenced/,
    );
  });

  test('a result whose token is not the epoch (a holder that lost its claim wrote it): ResultNotFenced', async () => {
    const w = world();
    await putAll(
      w.model,
      warmPool(),
      snap(captureStatus({ epoch: 5 }), captured('snap://stale', { token: 3 })),
    );
    const c = w.model.getNow('Capture', key('snap'));
    expect(c.status).toMatchObject({ epoch: 5, result: { token: 3 } });
    expect(c.status?.claim).toBeUndefined();
    await expectNoPods(w, 'ResultNotFenced', 'Warning', /token 3 is older than epoch 5/);
  });

  test('spec.source.container names no container of the template: ContainerNotFound, a Warning Event', async () => {
    const w = world();
    await putAll(w.model, podPool('warm', withSource('snap', 'sidecar')), snap(captured('snap://ok')));
    await expectNoPods(w, 'ContainerNotFound', 'Warning', /"sidecar" names no container/);
  });

  test('excess Idle pods are still scaled down (to minIdle), nothing is created in their place', async () => {
    const w = world();
    await putAll(
      w.model,
      warmPool(withMinIdle(1)),
      snap(),
      pod('old-1', inPool('warm'), idle(), onNode('n1'), ready()),
      pod('old-2', inPool('warm'), idle(), onNode('n1'), ready()),
      pod('old-3', inPool('warm'), idle(), onNode('n1'), ready()),
    );
    const before = w.model.writes.length;
    await settle(w, 3);
    expect(w.model.writes.slice(before).filter((x) => x.kind === 'Pod' && x.verb === 'create')).toEqual([]);
    expect(idlePods(w).map((p) => p.metadata.name)).toEqual(['old-1']);
    expect(sourceReady(w)).toMatchObject({ status: 'False', reason: 'NotCaptured' });
  });

  test('existing pods are left alone below minIdle: no creates, no deletes, not even of outdated Idle pods', async () => {
    const w = world();
    await putAll(
      w.model,
      warmPool(withMinIdle(3)),
      snap(),
      pod('old-1', inPool('warm'), idle(), onNode('n1'), ready()),
      pod('old-2', inPool('warm'), idle(), onNode('n1'), ready()),
    );
    const before = w.model.writes.length;
    await settle(w, 3);
    expect(w.model.writes.slice(before).filter((x) => x.kind === 'Pod')).toEqual([]);
    expect(poolPods(w).map((p) => p.metadata.name)).toEqual(['old-1', 'old-2']);
    expect(sourceReady(w)).toMatchObject({ status: 'False', reason: 'NotCaptured' });
    expect(w.model.getNow('PodPool', key('warm')).status).toMatchObject({ total: 2, idle: 2 });
  });
});

describe('a fenced result seeds the pods', () => {
  test('every new pod carries the source annotations, env in every container and the seeded hash', async () => {
    const w = world();
    const template = podTemplate(
      { app: 'warm' },
      {
        containers: [
          { name: 'main', image: 'app:1', env: [{ name: 'KEEP', value: 'x' }] },
          { name: 'side', image: 'side:1' },
        ],
        initContainers: [{ name: 'fetch', image: 'fetch:1' }],
      },
    );
    const [pool] = await putAll(
      w.model,
      warmPool(withTemplate(template)),
      snap(captured('snap://web/7', { token: 7 })),
    );
    await settle(w);
    const seed = { captureName: 'snap', token: 7, ref: 'snap://web/7' };
    const hash = poolTemplateHash(pool as PodPool, seed);
    expect(hash).not.toBe(poolTemplateHash(pool as PodPool));
    const pods = idlePods(w);
    expect(pods).toHaveLength(2);
    for (const p of pods) {
      expect(p.metadata.annotations).toMatchObject({
        [ANNOTATION_SOURCE_CAPTURE]: 'snap',
        [ANNOTATION_SOURCE_REF]: 'snap://web/7',
        [ANNOTATION_SOURCE_TOKEN]: '7',
      });
      expect(p.metadata.labels?.[LABEL_TEMPLATE_HASH]).toBe(hash);
      for (const c of [...p.spec.containers, ...((p.spec.initContainers as typeof p.spec.containers) ?? [])])
        expect(envOf(c), c.name).toMatchObject({ [ENV_SOURCE_REF]: 'snap://web/7', [ENV_SOURCE_TOKEN]: '7' });
      expect(envOf(p.spec.containers[0]!)).toMatchObject({ KEEP: 'x' });
      // A ref that is not `image:` leaves the images alone.
      expect(p.spec.containers.map((c) => c.image)).toEqual(['app:1', 'side:1']);
    }
    expect(sourceReady(w)).toMatchObject({ status: 'True', reason: 'Fenced' });
    expect(sourceReady(w)?.message).toContain('snap://web/7 (token 7)');
    expect(w.model.getNow('PodPool', key('warm')).status).toMatchObject({ templateHash: hash, updated: 2 });
    expect(w.events.filter((e) => e.reason === 'SourceFenced')).toHaveLength(1);
  });

  test('the fenced result of a real claim (acquire, then the fenced complete) seeds the pods', async () => {
    const w = world({ fence: true });
    const holder = await put(w.model, pod('w-1', withLabels({ app: 'w' }), onNode('n1'), ready()));
    await putAll(w.model, warmPool(), snap());
    const { capture: held } = await acquireCapture(w.model, key('snap'), refOf(holder), w.deps.now);
    await settle(w, 2);
    expect(poolPods(w)).toEqual([]);
    expect(sourceReady(w)).toMatchObject({ reason: 'NotCaptured' });
    await completeCapture(w.model, key('snap'), held.status!.claim!.token, 'snap://real', w.deps.now);
    await settle(w);
    expect(idlePods(w).map((p) => p.metadata.annotations?.[ANNOTATION_SOURCE_REF])).toEqual([
      'snap://real',
      'snap://real',
    ]);
  });

  test('an image: ref becomes the image of the first container, or of spec.source.container', async () => {
    const containers = [
      { name: 'main', image: 'app:1' },
      { name: 'side', image: 'side:1' },
    ];
    const ref = 'image:localhost/claimkit-checkpoint/default-snap:7';
    for (const [container, want] of [
      [undefined, ['localhost/claimkit-checkpoint/default-snap:7', 'side:1']],
      ['side', ['app:1', 'localhost/claimkit-checkpoint/default-snap:7']],
    ] as const) {
      const w = world();
      await putAll(
        w.model,
        podPool(
          'warm',
          withSource('snap', container),
          withTemplate(podTemplate({ app: 'warm' }, { containers })),
        ),
        snap(captured(ref, { token: 7 })),
      );
      await settle(w, 2);
      const pods = idlePods(w);
      expect(pods).toHaveLength(2);
      for (const p of pods) {
        expect(p.spec.containers.map((c) => c.image)).toEqual(want);
        expect(p.metadata.annotations?.[ANNOTATION_SOURCE_REF]).toBe(ref);
      }
    }
  });

  test("the template's own source annotations are never copied to a pod", async () => {
    const w = world();
    const template = podTemplate({ app: 'warm' });
    template.metadata!.annotations = {
      [ANNOTATION_SOURCE_TOKEN]: '99',
      [ANNOTATION_SOURCE_REF]: 'forged',
      note: 'x',
    };
    await putAll(w.model, warmPool(withTemplate(template)), snap(captured('snap://ok', { token: 1 })));
    await put(w.model, podPool('plain', withTemplate(template), withMinIdle(1)));
    await settle(w, 2);
    await reconcilePodPool(w.deps, key('plain'));
    for (const p of w.model.listNow('Pod', { namespace: NS })) {
      const a = p.metadata.annotations ?? {};
      expect(a.note).toBe('x');
      expect(a[ANNOTATION_SOURCE_TOKEN], p.metadata.name).toBe(
        p.metadata.labels?.[LABEL_POOL] === 'warm' ? '1' : undefined,
      );
      expect(a[ANNOTATION_SOURCE_REF]).not.toBe('forged');
    }
  });

  test('a new fenced result with a higher token replaces the Idle pods, warm before delete', async () => {
    const w = world({ fence: true });
    const holder = await put(w.model, pod('w-1', withLabels({ app: 'w' }), onNode('n1'), ready()));
    const [pool] = await putAll(w.model, warmPool(), snap());
    const { capture: v1Claim } = await acquireCapture(w.model, key('snap'), refOf(holder), w.deps.now);
    await completeCapture(w.model, key('snap'), v1Claim.status!.claim!.token, 'snap://v1', w.deps.now);
    await settle(w);
    const first = idlePods(w).map((p) => p.metadata.name);
    expect(first).toHaveLength(2);

    // The capture runs again (its result discarded, a new claim with a higher token, the fenced
    // complete): while it runs the pool leaves its pods alone; the new result then rolls them.
    const c = w.model.getNow('Capture', key('snap'));
    const { result: _gone, ...rest } = c.status!;
    await w.model.updateStatus<Capture>({ ...c, status: { ...rest, phase: 'Pending' } });
    const { capture: held } = await acquireCapture(w.model, key('snap'), refOf(holder), w.deps.now);
    expect(held.status?.claim?.token).toBe(2);
    await settle(w, 2);
    expect(idlePods(w).map((p) => p.metadata.name)).toEqual(first);
    await completeCapture(w.model, key('snap'), 2, 'snap://v2', w.deps.now);

    const hash = poolTemplateHash(pool as PodPool, { captureName: 'snap', token: 2, ref: 'snap://v2' });
    let minReadyIdle = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 10; round++) {
      await reconcilePodPool(w.deps, key('warm'));
      w.model.completePodDeletions();
      minReadyIdle = Math.min(minReadyIdle, idlePods(w).filter(isPodReady).length);
      warmAll(w);
    }
    expect(minReadyIdle).toBeGreaterThanOrEqual(2);
    const after = idlePods(w);
    expect(after).toHaveLength(2);
    expect(after.some((p) => first.includes(p.metadata.name))).toBe(false);
    for (const p of after) {
      expect(isUpdatedPod(p, hash)).toBe(true);
      expect(p.metadata.annotations).toMatchObject({
        [ANNOTATION_SOURCE_TOKEN]: '2',
        [ANNOTATION_SOURCE_REF]: 'snap://v2',
      });
    }
    expect(w.events.filter((e) => e.reason === 'SourceFenced').map((e) => e.message)).toEqual([
      expect.stringContaining('snap://v1 (token 1)'),
      expect.stringContaining('snap://v2 (token 2)'),
    ]);
  });

  test('a Bound pod of an earlier fenced result stays with its claim and is deleted, not recycled, on release', async () => {
    const w = world();
    const [pool, , claim] = await putAll(
      w.model,
      warmPool(withMinIdle(0)),
      snap(captured('snap://v2', { token: 2 })),
      podClaim('c1', forPool('warm'), boundTo('p-v1', 'n1'), withReleaseFinalizer()),
    );
    const v1 = poolTemplateHash(pool as PodPool, { captureName: 'snap', token: 1, ref: 'snap://v1' });
    await put(
      w.model,
      pod(
        'p-v1',
        inPool('warm'),
        withLabels({ [LABEL_TEMPLATE_HASH]: v1 }),
        withAnnotations({ [ANNOTATION_SOURCE_TOKEN]: '1', [ANNOTATION_SOURCE_REF]: 'snap://v1' }),
        claimedBy(claim as PodClaim),
        onNode('n1'),
        ready(),
      ),
    );
    await reconcilePodPool(w.deps, key('warm'));
    expect(w.model.getNow('Pod', key('p-v1')).metadata.labels?.[LABEL_STATE]).toBe('Bound');
    expect(
      findCondition(w.model.getNow('PodPool', key('warm')).status?.conditions, 'TemplateUpToDate'),
    ).toMatchObject({
      status: 'False',
      reason: 'OutdatedPodsBound',
    });
    await w.model.delete('PodClaim', key('c1'));
    for (let i = 0; i < 5; i++) await reconcilePodClaim(w.deps, key('c1'));
    w.model.completePodDeletions();
    // Recycle is the pool's policy, but a pod of an earlier result is deleted, not returned to Idle.
    expect(w.model.listNow('Pod', { namespace: NS }).map((p) => p.metadata.name)).not.toContain('p-v1');
  });

  test('while the source is not fenced a release follows the releasePolicy alone (nothing is judged outdated)', async () => {
    const w = world();
    const [, , claim] = await putAll(
      w.model,
      warmPool(withMinIdle(0)),
      snap(),
      podClaim('c1', forPool('warm'), boundTo('p-v1', 'n1'), withReleaseFinalizer()),
    );
    await put(
      w.model,
      pod(
        'p-v1',
        inPool('warm'),
        withAnnotations({ [ANNOTATION_SOURCE_TOKEN]: '1' }),
        claimedBy(claim as PodClaim),
        onNode('n1'),
        ready(),
      ),
    );
    await w.model.delete('PodClaim', key('c1'));
    for (let i = 0; i < 5; i++) await reconcilePodClaim(w.deps, key('c1'));
    expect(w.model.getNow('Pod', key('p-v1')).metadata.labels?.[LABEL_STATE]).toBe('Idle');
  });
});

describe("a Capture's change wakes the pools that name it", () => {
  test('the fenced complete is routed (mapEvent) to the pool, whose reconcile then seeds its pods', async () => {
    const w = world({ fence: true });
    const holder = await put(w.model, pod('w-1', withLabels({ app: 'w' }), onNode('n1'), ready()));
    await putAll(w.model, warmPool(), podPool('other', withSource('elsewhere')), podPool('plain'), snap());
    const view: RoutingView = {
      captures: (ns) => w.model.listNow('Capture', { namespace: ns }),
      pools: (ns) => w.model.listNow('PodPool', { namespace: ns }),
      references: new ClaimIndex([]),
    };
    const queued = new Set<string>();
    let last: AnyObject | undefined;
    w.model.watch(
      'Capture',
      {},
      {
        onEvent: (e) => {
          for (const k of mapEvent('Capture', last, e.object as AnyObject, view)) queued.add(k);
          last = e.object as AnyObject;
        },
      },
    );
    await settle(w, 1);
    expect(poolPods(w)).toEqual([]);
    const { capture: held } = await acquireCapture(w.model, key('snap'), refOf(holder), w.deps.now);
    await completeCapture(w.model, key('snap'), held.status!.claim!.token, 'snap://woken', w.deps.now);
    expect([...queued].sort()).toEqual([`Capture|${NS}/snap`, `PodPool|${NS}/warm`]);
    // The pool's queue key, reconciled as the controller's worker would: it seeds its pods.
    for (const k of queued)
      if (k.startsWith('PodPool|')) await reconcilePodPool(w.deps, key(k.split('/')[1]!));
    expect(poolPods(w).map((p) => p.metadata.annotations?.[ANNOTATION_SOURCE_REF])).toEqual([
      'snap://woken',
      'snap://woken',
    ]);
  });
});
