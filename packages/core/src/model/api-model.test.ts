import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors.ts';
import type { WatchEvent } from '../api/ports.ts';
import type { ConfigMap } from '../api/types.ts';
import { schemaModelOptions } from '../schema/validate.ts';
import {
  capture,
  configMap,
  forCreate,
  inSet,
  onNode,
  ownedBy,
  pod,
  podClaim,
  podClaimSet,
  withFinalizers,
  withLabels,
} from '../testing/fixtures.ts';
import { ApiModel } from './api-model.ts';
import { CacheView } from './cache-view.ts';
import { ManualClock } from './clock.ts';

const ns = 'default';
const k = (name: string) => ({ namespace: ns, name });

async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return e instanceof ApiError ? e.reason : `non-ApiError: ${String(e)}`;
  }
}

function model(): ApiModel {
  return new ApiModel({ ...schemaModelOptions(), clock: new ManualClock() });
}

describe('fault injection', () => {
  it('answers each injected reason with its HTTP code and writes nothing', async () => {
    const m = model();
    await m.create(forCreate(configMap('a', { v: '1' })));
    const codes: Record<string, number> = {};
    for (const r of ['Conflict', 'Gone', 'TooManyRequests', 'Unavailable', 'Timeout'] as const) {
      m.faults.inject({ verbs: ['patch'], kinds: ['ConfigMap'], reason: r, times: 1 });
      try {
        await m.patch('ConfigMap', k('a'), { data: { v: r } });
      } catch (e) {
        codes[r] = (e as ApiError).code;
        if (r === 'TooManyRequests') expect((e as ApiError).retryAfterSeconds).toBe(1);
        expect((e as ApiError).transient).toBe(r !== 'Conflict');
      }
    }
    expect(codes).toEqual({ Conflict: 409, Gone: 410, TooManyRequests: 429, Unavailable: 503, Timeout: 504 });
    expect(m.getNow('ConfigMap', k('a')).data).toEqual({ v: '1' });
    expect(m.writes.filter((w) => w.verb === 'patch')).toEqual([]);
  });

  it('a rule with `times` fires that often; verbs, kinds and names filter', async () => {
    const m = model();
    await m.create(forCreate(configMap('a')));
    await m.create(forCreate(configMap('b')));
    m.faults.inject({ verbs: ['get'], name: 'a', reason: 'Unavailable', times: 2 });
    expect(await reason(m.get('ConfigMap', k('b')))).toBe('ok');
    expect(await reason(m.get('ConfigMap', k('a')))).toBe('Unavailable');
    expect(await reason(m.list('ConfigMap'))).toBe('ok');
    expect(await reason(m.get('ConfigMap', k('a')))).toBe('Unavailable');
    expect(await reason(m.get('ConfigMap', k('a')))).toBe('ok');
  });

  it('appliedBeforeError: the write is committed, the caller still gets a Timeout', async () => {
    const m = model();
    m.faults.inject({ verbs: ['create'], reason: 'Timeout', appliedBeforeError: true, times: 1 });
    expect(await reason(m.create(forCreate(configMap('a', { v: '1' }))))).toBe('Timeout');
    expect(m.getNow('ConfigMap', k('a')).data).toEqual({ v: '1' });
    // A retry sees the write that happened.
    expect(await reason(m.create(forCreate(configMap('a'))))).toBe('AlreadyExists');
    // On reads, appliedBeforeError means nothing: the read fails.
    m.faults.inject({ verbs: ['get'], reason: 'Timeout', appliedBeforeError: true, times: 1 });
    expect(await reason(m.get('ConfigMap', k('a')))).toBe('Timeout');
    expect(await reason(m.get('ConfigMap', k('a')))).toBe('ok');
  });

  it('notFoundFor: reads of one object are NotFound until the window ends', async () => {
    const clock = new ManualClock();
    const m = new ApiModel({ clock });
    await m.create(forCreate(pod('p')));
    m.faults.notFoundFor('Pod', k('p'), clock.now() + 5000);
    expect(await reason(m.get('Pod', k('p')))).toBe('NotFound');
    clock.advance(4999);
    expect(await reason(m.get('Pod', k('p')))).toBe('NotFound');
    clock.advance(1);
    expect(await reason(m.get('Pod', k('p')))).toBe('ok');
  });

  it('probability draws from the seeded RNG: the same seed replays the same faults', async () => {
    const run = async (seed: number) => {
      const m = new ApiModel({ seed });
      await m.create(forCreate(configMap('a')));
      m.faults.inject({ verbs: ['get'], reason: 'Unavailable', probability: 0.5 });
      const out: string[] = [];
      for (let i = 0; i < 40; i++) out.push(await reason(m.get('ConfigMap', k('a'))));
      return out.join(',');
    };
    const a = await run(7);
    expect(a).toBe(await run(7));
    expect(a).toContain('ok');
    expect(a).toContain('Unavailable');
  });
});

describe('CacheView', () => {
  it('serves the state `lag` events behind and catches up', async () => {
    const m = model();
    const cache = new CacheView(m, 2);
    await m.create(forCreate(configMap('a', { v: '1' })));
    await m.patch('ConfigMap', k('a'), { data: { v: '2' } });
    expect(await reason(cache.get('ConfigMap', k('a')))).toBe('NotFound');
    await m.patch('ConfigMap', k('a'), { data: { v: '3' } });
    expect((await cache.get('ConfigMap', k('a'))).data).toEqual({ v: '1' });
    cache.lag = 0;
    expect((await cache.get('ConfigMap', k('a'))).data).toEqual({ v: '3' });
    await m.delete('ConfigMap', k('a'));
    expect((await cache.list('ConfigMap')).items).toEqual([]);
  });

  it('a merge patch that leaves metadata alone does not rewrite the event a lagging cache has yet to apply', async () => {
    // The patch's result once shared metadata with the stored object, which the event history also
    // holds: committing it stamped the new resourceVersion on the previous event's object, so a
    // lagging cache served the old content under the new resourceVersion and an update made from
    // it passed the optimistic-concurrency check (soak seed 4007).
    const m = model();
    const cache = new CacheView(m, 1);
    const created = await m.create(forCreate(configMap('a', { v: '1' })));
    const patched = await m.patch('ConfigMap', k('a'), { data: { v: '2' } });
    expect(patched.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    const stale = await cache.get('ConfigMap', k('a'));
    expect(stale.data).toEqual({ v: '1' });
    expect(stale.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(await reason(m.update({ ...stale, data: { v: 'from stale' } }))).toBe('Conflict');
    expect((await m.get('ConfigMap', k('a'))).data).toEqual({ v: '2' });
  });

  it('relists when the events it needs were dropped', async () => {
    const m = new ApiModel({ eventWindow: 3 });
    const cache = new CacheView(m, 0);
    for (let i = 0; i < 6; i++) await m.create(forCreate(configMap(`c${i}`)));
    const list = await cache.list('ConfigMap');
    expect(list.items.map((o) => o.metadata.name)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5']);
    expect(list.resourceVersion).toBe(m.resourceVersion);
  });
});

describe('watch', () => {
  const collect = (seen: string[]) => ({
    onEvent: (e: WatchEvent<ConfigMap>) => seen.push(`${e.type} ${e.object.metadata.name}`),
  });

  it('resumes after a resourceVersion and filters by selector', async () => {
    const m = model();
    await m.create(forCreate(configMap('a', {}, withLabels({ w: 'y' }))));
    const rv = m.resourceVersion;
    await m.create(forCreate(configMap('b', {}, withLabels({ w: 'y' }))));
    await m.create(forCreate(configMap('c')));
    const seen: string[] = [];
    const stop = m.watch('ConfigMap', { labelSelector: 'w=y', resourceVersion: rv }, collect(seen));
    await m.patch('ConfigMap', k('a'), { data: { x: '1' } });
    stop();
    await m.delete('ConfigMap', k('b'));
    expect(seen).toEqual(['ADDED b', 'MODIFIED a']);
    expect(m.openWatches).toBe(0);
  });

  it('without a resourceVersion starts with synthetic ADDED events for what exists', async () => {
    const m = model();
    await m.create(forCreate(configMap('a')));
    await m.patch('ConfigMap', k('a'), { data: { x: '1' } });
    await m.create(forCreate(configMap('b')));
    await m.delete('ConfigMap', k('b'));
    const seen: WatchEvent<ConfigMap>[] = [];
    const stop = m.watch('ConfigMap', {}, { onEvent: (e) => seen.push(e) });
    expect(seen.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.data?.x}`)).toEqual(['ADDED a 1']);
    await m.create(forCreate(configMap('c')));
    expect(seen.map((e) => e.type)).toEqual(['ADDED', 'ADDED']);
    stop();
  });

  it('a write made by a handler during the replay arrives after the replay, not lost or in between', async () => {
    const m = model();
    await m.create(forCreate(configMap('a')));
    await m.create(forCreate(configMap('b')));
    const seen: string[] = [];
    const stop = m.watch(
      'ConfigMap',
      {},
      {
        onEvent: (e) => {
          seen.push(`${e.type} ${e.object.metadata.name}`);
          if (e.object.metadata.name === 'a' && e.type === 'ADDED') void m.create(forCreate(configMap('c')));
        },
      },
    );
    stop();
    expect(seen).toEqual(['ADDED a', 'ADDED b', 'ADDED c']);
  });

  it('closes with Gone (410) when the resourceVersion is older than the event window', async () => {
    const m = new ApiModel({ eventWindow: 3 });
    await m.create(forCreate(configMap('a')));
    const old = m.resourceVersion;
    for (let i = 0; i < 5; i++) await m.patch('ConfigMap', k('a'), { data: { i: String(i) } });
    const closed: (ApiError | undefined)[] = [];
    m.watch(
      'ConfigMap',
      { resourceVersion: old },
      { onEvent: () => undefined, onClose: (e) => closed.push(e) },
    );
    expect(closed).toEqual([expect.objectContaining({ reason: 'Gone', code: 410 })]);
    expect(m.openWatches).toBe(0);
    const recent = String(Number(m.resourceVersion) - 2);
    const seen: string[] = [];
    m.watch(
      'ConfigMap',
      { resourceVersion: recent },
      { onEvent: (e) => seen.push(e.object.data?.i ?? '') },
    )();
    expect(seen).toEqual(['3', '4']);
    const bad: (ApiError | undefined)[] = [];
    m.watch(
      'ConfigMap',
      { resourceVersion: 'x7' },
      { onEvent: () => undefined, onClose: (e) => bad.push(e) },
    );
    expect(bad.map((e) => e?.reason)).toEqual(['BadRequest']);
  });

  it('bookmarks go only to watches that asked, at the current resourceVersion', async () => {
    const m = model();
    const marks: string[] = [];
    const stopA = m.watch(
      'ConfigMap',
      { namespace: 'quiet', allowWatchBookmarks: true },
      { onEvent: () => undefined, onBookmark: (rv) => marks.push(`a ${rv}`) },
    );
    const stopB = m.watch(
      'ConfigMap',
      {},
      { onEvent: () => undefined, onBookmark: (rv) => marks.push(`b ${rv}`) },
    );
    await m.create(forCreate(configMap('x')));
    m.sendBookmarks();
    stopA();
    m.sendBookmarks();
    stopB();
    expect(marks).toEqual([`a ${m.resourceVersion}`]);
  });

  it('closeWatches ends open watches from the server side, once, with or without an error', async () => {
    const m = model();
    const closes: string[] = [];
    const seen: string[] = [];
    m.watch(
      'ConfigMap',
      {},
      { ...collect(seen), onClose: (e) => closes.push(`cm ${e?.reason ?? 'normal'}`) },
    );
    m.watch(
      'Pod',
      {},
      { onEvent: () => undefined, onClose: (e) => closes.push(`pod ${e?.reason ?? 'normal'}`) },
    );
    expect(m.closeWatches({ kind: 'ConfigMap' })).toBe(1);
    await m.create(forCreate(configMap('after')));
    expect(m.closeWatches({ error: new ApiError('Unavailable', 'apiserver restarting') })).toBe(1);
    expect(m.closeWatches()).toBe(0);
    expect(closes).toEqual(['cm normal', 'pod Unavailable']);
    expect(seen).toEqual([]);
  });

  it('a watch fault closes the watch at once with the injected reason', () => {
    const m = model();
    m.faults.inject({ verbs: ['watch'], kinds: ['Pod'], reason: 'Forbidden', times: 1 });
    const closes: string[] = [];
    m.watch('Pod', {}, { onEvent: () => undefined, onClose: (e) => closes.push(e?.reason ?? 'normal') });
    m.watch('Pod', {}, { onEvent: () => undefined, onClose: (e) => closes.push(e?.reason ?? 'normal') });
    expect(closes).toEqual(['Forbidden']);
    expect(m.openWatches).toBe(1);
  });

  it('the DELETED event after the last finalizer removal carries the final state', async () => {
    const m = model();
    await m.create(forCreate(configMap('a', {}, withFinalizers('x/y'))));
    await m.delete('ConfigMap', k('a'));
    const seen: WatchEvent<ConfigMap>[] = [];
    m.watch('ConfigMap', { resourceVersion: m.resourceVersion }, { onEvent: (e) => seen.push(e) });
    await m.patch('ConfigMap', k('a'), { metadata: { finalizers: null } });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.type).toBe('DELETED');
    expect(seen[0]!.object.metadata.finalizers).toBeUndefined();
    expect(seen[0]!.object.metadata.deletionTimestamp).toBeDefined();
  });
});

describe('garbage collection', () => {
  it('deletes dependents whose every owner is gone, through finalizers too, without faults', async () => {
    const m = model();
    const owner = await m.create(forCreate(configMap('owner')));
    const other = await m.create(forCreate(configMap('other')));
    await m.create(forCreate(configMap('dep', {}, ownedBy(owner))));
    await m.create(forCreate(configMap('held', {}, ownedBy(owner), withFinalizers('x/y'))));
    await m.create(forCreate(configMap('two', {}, ownedBy(owner), ownedBy(other))));
    await m.create(forCreate(configMap('grandchild', {}, ownedBy(m.getNow('ConfigMap', k('dep'))))));
    // Faults on client deletes do not stop the server-side collector.
    m.faults.inject({ verbs: ['delete'], name: 'dep', reason: 'Unavailable' });
    await m.delete('ConfigMap', k('owner'));
    expect(m.tryGetNow('ConfigMap', k('dep'))).toBeUndefined();
    expect(m.tryGetNow('ConfigMap', k('grandchild'))).toBeUndefined();
    expect(m.getNow('ConfigMap', k('held')).metadata.deletionTimestamp).toBeDefined();
    expect(m.getNow('ConfigMap', k('two')).metadata.deletionTimestamp).toBeUndefined();
    expect(m.writes.filter((w) => w.verb === 'delete').map((w) => w.name)).toEqual(['owner']);
  });

  it('claims owned by a set go with it', async () => {
    const m = model();
    const set = await m.create(forCreate(podClaimSet('x')));
    await m.create(forCreate(podClaim('x-1', inSet(set))));
    await m.delete('PodClaimSet', k('x'));
    expect(m.listNow('PodClaim')).toEqual([]);
  });
});

describe('graceful pod deletion', () => {
  it('a scheduled pod stays Terminating until completePodDeletions; an unscheduled one goes at once', async () => {
    const m = model();
    await m.create(forCreate(pod('scheduled', onNode('n1'))));
    await m.create(forCreate(pod('pending')));
    const kept = await m.delete('Pod', k('scheduled'));
    expect(kept?.metadata.deletionTimestamp).toBeDefined();
    expect(kept?.metadata.deletionGracePeriodSeconds).toBe(30);
    expect(await m.delete('Pod', k('pending'))).toBeUndefined();
    expect(m.tryGetNow('Pod', k('pending'))).toBeUndefined();
    expect(m.completePodDeletions((p) => p.metadata.name !== 'scheduled')).toBe(0);
    expect(m.completePodDeletions()).toBe(1);
    expect(m.tryGetNow('Pod', k('scheduled'))).toBeUndefined();
  });

  it('gracePeriodSeconds 0 deletes at once; finalizers still hold the pod', async () => {
    const m = model();
    await m.create(forCreate(pod('a', onNode('n1'))));
    await m.delete('Pod', k('a'));
    expect(await m.delete('Pod', k('a'), { gracePeriodSeconds: 0 })).toBeUndefined();
    await m.create(forCreate(pod('b', onNode('n1'), withFinalizers('x/y'))));
    await m.delete('Pod', k('b'));
    expect(m.completePodDeletions()).toBe(0);
    await m.patch('Pod', k('b'), { metadata: { finalizers: null } });
    // The pod is still terminating on its node: the kubelet completes it.
    expect(m.tryGetNow('Pod', k('b'))).toBeDefined();
    expect(m.completePodDeletions()).toBe(1);
  });
});

describe('schema options', () => {
  it('defaults and validates on update and patch as well as create', async () => {
    const m = model();
    const c = await m.create(forCreate(capture('c')));
    const spec = { ...c.spec } as Record<string, unknown>;
    delete spec.leaseSeconds;
    const u = await m.update({ ...c, spec } as unknown as typeof c);
    expect(u.spec.leaseSeconds).toBe(3000);
    expect(await reason(m.patch('Capture', k('c'), { spec: { maxAttempts: 0 } }))).toBe('Invalid');
    expect(await reason(m.patchStatus('Capture', k('c'), { status: { epoch: -1 } }))).toBe('Invalid');
    expect(m.getNow('Capture', k('c')).spec.maxAttempts).toBe(3);
  });

  it('Invalid errors carry every cause', async () => {
    const m = model();
    const bad = forCreate(podClaim('Bad_Name'));
    bad.spec.podName = 'p';
    bad.spec.sourcePod = 'p';
    try {
      await m.create(bad);
      expect.unreachable();
    } catch (e) {
      expect((e as ApiError).causes.map((c) => c.field).sort()).toEqual(['metadata.name', 'spec.sourcePod']);
      expect((e as ApiError).message).toContain('PodClaim "Bad_Name" is invalid');
    }
  });
});
