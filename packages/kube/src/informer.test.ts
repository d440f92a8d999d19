// The informer and its cache over core's in-memory ApiModel (real persistence, real resourceVersions,
// 410 for versions older than the event window, bookmarks, watches the server ends) with fake
// timers: relist on 410 with diffs, resume after a watch ends, bookmarks moving the resume point,
// the watchdog, backoff, paging, and indexes that stay right across updates and deletes.
import {
  ApiError,
  type ConfigMap,
  type Kind,
  type KindMap,
  type KubeObject,
  LABEL_POOL,
  LABEL_STATE,
  type ListOptions,
  type ListWatcher,
  matchesList,
  type OldestFirstKey,
  type OldestFirstReader,
  type PodClaim,
  type WatchHandlers,
  type WatchOptions,
} from '@claimkit/core';
import { ApiModel, ManualClock, Rng } from '@claimkit/core/model';
import {
  boundTo,
  configMap,
  FakeTimers,
  forCreate,
  inNamespace,
  inPool,
  migratingFrom,
  pod,
  podClaim,
  put,
  withAnnotations,
  withLabels,
  withState,
} from '@claimkit/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Informer, type InformerOptions, InformerStartError } from './informer.ts';
import { InformerCache } from './informer-cache.ts';

const NS = 'ns';
const k = (name: string, namespace = NS) => ({ namespace, name });
const cm = (name: string, v: string, ...mods: Parameters<typeof configMap>[2][]) =>
  forCreate(configMap(name, { v }, inNamespace(NS), ...mods));
/** Lets every pending promise continuation run (the model answers list asynchronously). */
const flush = () => new Promise<void>((r) => setImmediate(r));

/** The model as an informer's source, recording every list and watch it is asked for. */
function recorded(m: ApiModel) {
  const calls: string[] = [];
  const source: ListWatcher = {
    list: (kind, opts) => {
      calls.push(
        `list${opts?.limit ? ` limit=${opts.limit}` : ''}${opts?.continue ? ` continue=${opts.continue}` : ''}`,
      );
      return m.list(kind, opts);
    },
    watch: (kind, opts, handlers) => {
      calls.push(`watch rv=${opts.resourceVersion}`);
      return m.watch(kind, opts, handlers);
    },
  };
  return { calls, source };
}

function recordingLog() {
  const lines: string[] = [];
  const at = (level: string) => (msg: string, f?: Record<string, unknown>) =>
    lines.push(`${level} ${msg}${f?.error ? `: ${String(f.error)}` : ''}`);
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

/** Handlers that write what they see as lines. */
function seenBy<K extends Kind>(inf: Informer<K>): string[] {
  const seen: string[] = [];
  const v = (o: KindMap[K]) => `${o.metadata.name}@${(o as ConfigMap).data?.v ?? ''}`;
  inf.addHandler({
    onAdd: (o) => seen.push(`add ${v(o)}`),
    onUpdate: (a, b) => seen.push(`update ${v(a)}->${v(b)}`),
    onDelete: (o) => seen.push(`delete ${v(o)}`),
  });
  return seen;
}

const running: { stop(): void }[] = [];
afterEach(() => {
  for (const r of running.splice(0)) r.stop();
});

function informer<K extends Kind>(source: ListWatcher, kind: K, opts: InformerOptions = {}): Informer<K> {
  const inf = new Informer(source, kind, { random: () => 0, ...opts });
  running.push(inf);
  return inf;
}

describe('Informer over the ApiModel', () => {
  it('lists, then streams adds, updates and deletes (the final state) with the previous object', async () => {
    const m = new ApiModel();
    await m.create(cm('pre', '0'));
    const timers = new FakeTimers();
    const inf = informer(m, 'ConfigMap', { namespace: NS, timers });
    const seen = seenBy(inf);
    await inf.start();
    await m.create(cm('a', '1'));
    await m.patch('ConfigMap', k('a'), { data: { v: '2' } });
    await m.create(cm('elsewhere', '1', inNamespace('other')));
    await m.delete('ConfigMap', k('pre'));
    expect(seen).toEqual(['add pre@0', 'add a@1', 'update a@1->a@2', 'delete pre@0']);
    expect(inf.resourceVersion).toBe(m.resourceVersion);
    expect(inf.get(k('a'))?.data).toEqual({ v: '2' });
    // A handler added later gets what is stored, as adds.
    expect(seenBy(inf)).toEqual(['add a@2']);
  });

  it('a transform decides what the store keeps, from the list and from every watch event', async () => {
    const m = new ApiModel();
    await m.create(cm('pre', '0', withAnnotations({ big: 'x'.repeat(100) })));
    const timers = new FakeTimers();
    const dropBig = (o: KubeObject): KubeObject => {
      const { big: _drop, ...annotations } = o.metadata.annotations ?? {};
      return { ...o, metadata: { ...o.metadata, annotations } };
    };
    const inf = informer(m, 'ConfigMap', { namespace: NS, timers, transform: dropBig });
    const seen = seenBy(inf);
    await inf.start();
    await m.create(cm('a', '1', withAnnotations({ big: 'y', keep: 'k' })));
    await m.patch('ConfigMap', k('a'), { data: { v: '2' } });
    expect(seen).toEqual(['add pre@0', 'add a@1', 'update a@1->a@2']);
    expect(inf.get(k('pre'))?.metadata.annotations).toEqual({});
    expect(inf.get(k('a'))?.metadata.annotations).toEqual({ keep: 'k' });
    expect(inf.get(k('a'))?.data).toEqual({ v: '2' });
  });

  it('lists in pages; the watch resumes from the first page version', async () => {
    const m = new ApiModel();
    for (let i = 0; i < 7; i++) await m.create(cm(`c${i}`, String(i)));
    const { calls, source } = recorded(m);
    const inf = informer(source, 'ConfigMap', { namespace: NS, pageSize: 3, timers: new FakeTimers() });
    await inf.start();
    expect(calls).toEqual([
      'list limit=3',
      'list limit=3 continue=ns/c2',
      'list limit=3 continue=ns/c5',
      `watch rv=${m.resourceVersion}`,
    ]);
    expect(inf.size).toBe(7);
    expect(inf.stats.lists).toBe(1);
  });

  it('a watch the server ends resumes from the last resourceVersion, without a relist', async () => {
    const m = new ApiModel();
    await m.create(cm('a', '1'));
    const { calls, source } = recorded(m);
    const timers = new FakeTimers();
    const { lines, log } = recordingLog();
    const inf = informer(source, 'ConfigMap', { namespace: NS, timers, log });
    const seen = seenBy(inf);
    await inf.start();
    await m.patch('ConfigMap', k('a'), { data: { v: '2' } });
    const resumeAt = m.resourceVersion;
    // A normal end after events: at once.
    expect(m.closeWatches()).toBe(1);
    expect(calls.at(-1)).toBe(`watch rv=${resumeAt}`);
    // A failed watch (the API server restarting): after a backoff; what changed meanwhile arrives.
    m.closeWatches({ error: new ApiError('Unavailable', 'apiserver shutting down') });
    expect(m.openWatches).toBe(0);
    await m.create(cm('b', '1'));
    await m.delete('ConfigMap', k('a'));
    timers.advance(1000);
    expect(m.openWatches).toBe(1);
    expect(calls.at(-1)).toBe(`watch rv=${resumeAt}`);
    expect(seen).toEqual(['add a@1', 'update a@1->a@2', 'add b@1', 'delete a@2']);
    expect(inf.stats).toMatchObject({ lists: 1, relists: 0, watches: 3, failures: 1 });
    expect(lines).toEqual(['warn watch failed; re-watching: apiserver shutting down']);
  });

  it('relists on 410 Gone and hands handlers the differences', async () => {
    const m = new ApiModel({ eventWindow: 5 });
    await m.create(cm('keep', '1'));
    await m.create(cm('change', '1'));
    await m.create(cm('gone', '1'));
    const { calls, source } = recorded(m);
    const timers = new FakeTimers();
    const inf = informer(source, 'ConfigMap', { namespace: NS, timers });
    const seen = seenBy(inf);
    await inf.start();
    seen.length = 0;
    // The connection drops; while the informer backs off, more changes than the window holds.
    m.closeWatches({ error: new ApiError('Unavailable', 'connection reset') });
    await m.patch('ConfigMap', k('change'), { data: { v: '2' } });
    await m.delete('ConfigMap', k('gone'));
    for (let i = 0; i < 6; i++) await m.create(cm(`other-${i}`, '1', inNamespace('other')));
    await m.create(cm('new', '1'));
    timers.advance(1000);
    await flush();
    expect(calls.slice(1)).toEqual([
      expect.stringMatching(/^watch rv=\d+$/),
      expect.stringMatching(/^watch rv=\d+$/), // answered 410
      'list limit=500',
      `watch rv=${m.resourceVersion}`,
    ]);
    expect(seen).toEqual(['update change@1->change@2', 'add new@1', 'delete gone@1']);
    expect(inf.stats).toMatchObject({ lists: 2, relists: 1 });
    expect(
      inf
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['change', 'keep', 'new']);
  });

  it('a bookmark moves the resume point of a quiet watch, so resuming needs no relist', async () => {
    const run = async (bookmark: boolean) => {
      const m = new ApiModel({ eventWindow: 5 });
      await m.create(cm('quiet', '1'));
      const timers = new FakeTimers();
      const inf = informer(m, 'ConfigMap', { namespace: NS, timers });
      await inf.start();
      const before = inf.resourceVersion;
      // Busy elsewhere: the window moves past the quiet watch's last version.
      for (let i = 0; i < 8; i++) await m.create(cm(`busy-${i}`, '1', inNamespace('busy')));
      if (bookmark) m.sendBookmarks();
      const at = inf.resourceVersion;
      m.closeWatches(); // a server timeout
      timers.advance(2000); // a watch that ended having delivered nothing resumes after a backoff
      await flush();
      return { before, at, model: m.resourceVersion, stats: { ...inf.stats } };
    };
    const withMark = await run(true);
    expect(withMark.at).toBe(withMark.model);
    expect(withMark.stats).toMatchObject({ bookmarks: 1, relists: 0, lists: 1 });
    const without = await run(false);
    expect(without.at).toBe(without.before);
    expect(without.stats).toMatchObject({ bookmarks: 0, relists: 1, lists: 2 });
  });

  it('the watchdog restarts a watch silent for watchdogMs from the same version; bookmarks keep it alive', async () => {
    const m = new ApiModel();
    await m.create(cm('a', '1'));
    // The first watch is a dead connection: the server keeps it open and sends nothing.
    let dead = true;
    const source: ListWatcher = {
      list: (kind, opts) => m.list(kind, opts),
      watch: <K extends Kind>(kind: K, opts: WatchOptions, h: WatchHandlers<KindMap[K]>) => {
        if (!dead) return m.watch(kind, opts, h);
        dead = false;
        return () => {};
      },
    };
    const timers = new FakeTimers();
    const inf = informer(source, 'ConfigMap', { namespace: NS, timers, watchdogMs: 60_000 });
    await inf.start();
    await m.patch('ConfigMap', k('a'), { data: { v: 'missed' } });
    timers.advance(59_000);
    expect(inf.get(k('a'))?.data?.v).toBe('1');
    timers.advance(1000);
    expect(inf.get(k('a'))?.data?.v).toBe('missed');
    expect(inf.stats.watchdogRestarts).toBe(1);
    // A healthy quiet watch with bookmarks is left alone.
    for (let i = 0; i < 5; i++) {
      timers.advance(30_000);
      m.sendBookmarks();
    }
    expect(inf.stats.watchdogRestarts).toBe(1);
    expect(inf.stats.watches).toBe(2);
  });

  it('failed watches back off (growing, capped), then resume; a normal end at once with nothing is not a spin', async () => {
    const m = new ApiModel();
    const { calls, source } = recorded(m);
    const timers = new FakeTimers();
    const inf = informer(source, 'ConfigMap', { timers, backoffInitialMs: 100, backoffMaxMs: 400 });
    await inf.start();
    m.faults.inject({ verbs: ['watch'], reason: 'Forbidden', times: 4 });
    m.closeWatches({ error: new ApiError('Unavailable', 'x') });
    const watchesAfter = (ms: number) => {
      timers.advance(ms);
      return calls.filter((c) => c.startsWith('watch')).length;
    };
    // random 0: each delay is half its cap: 50, 100, 200, 200, 200 ms.
    expect([watchesAfter(49), watchesAfter(1)]).toEqual([1, 2]);
    expect([watchesAfter(99), watchesAfter(1)]).toEqual([2, 3]);
    expect([watchesAfter(199), watchesAfter(1)]).toEqual([3, 4]);
    expect([watchesAfter(199), watchesAfter(1)]).toEqual([4, 5]);
    expect(watchesAfter(200)).toBe(6);
    expect(m.openWatches).toBe(1);
    expect(inf.stats.failures).toBe(5);
    // A watch that ends at once without delivering anything is retried after a delay too.
    m.closeWatches();
    expect(calls.filter((c) => c.startsWith('watch')).length).toBe(6);
    expect(watchesAfter(200)).toBe(7);
    const sourceEndingAtOnce: ListWatcher = {
      list: (kind, opts) => m.list(kind, opts),
      watch: (_kind, _opts, h) => {
        h.onClose?.();
        return () => {};
      },
    };
    const spinning = informer(sourceEndingAtOnce, 'ConfigMap', { timers, backoffInitialMs: 100 });
    await spinning.start();
    timers.advance(1000);
    expect(spinning.stats.watches).toBeGreaterThanOrEqual(2);
    expect(spinning.stats.watches).toBeLessThan(10);
  });

  it('a watch that streamed events before it failed (a connection cut) starts the backoff over', async () => {
    const m = new ApiModel();
    const { calls, source } = recorded(m);
    const timers = new FakeTimers();
    const inf = informer(source, 'ConfigMap', { timers, backoffInitialMs: 100, backoffMaxMs: 400 });
    await inf.start();
    const watches = () => calls.filter((c) => c.startsWith('watch')).length;
    // Four failures in a row: the backoff is at its cap.
    m.faults.inject({ verbs: ['watch'], reason: 'Forbidden', times: 3 });
    m.closeWatches({ error: new ApiError('Unavailable', 'x') });
    timers.advance(1000);
    expect(watches()).toBe(5);
    expect(m.openWatches).toBe(1);
    // This watch works for a while, then its connection is cut: resumed after the initial delay
    // (50 ms with random 0), not after the capped one, though nothing was listed since.
    await m.create(cm('a', '1'));
    await flush();
    expect(inf.get(k('a'))).toBeDefined();
    m.closeWatches({ error: new ApiError('Unavailable', 'connection reset') });
    timers.advance(49);
    expect(watches()).toBe(5);
    timers.advance(1);
    expect(watches()).toBe(6);
  });

  it('stop() leaves no watch open and no timer pending; nothing reaches handlers after it', async () => {
    const m = new ApiModel();
    const timers = new FakeTimers();
    const inf = informer(m, 'ConfigMap', { timers });
    const seen = seenBy(inf);
    await inf.start();
    inf.stop();
    await m.create(cm('after', '1'));
    expect(m.openWatches).toBe(0);
    expect(timers.size).toBe(0);
    expect(seen).toEqual([]);
    await expect(inf.start()).rejects.toThrow(/stopped/);
  });

  it('a handler that throws is logged; the other handlers and the store still get the change', async () => {
    const m = new ApiModel();
    const { lines, log } = recordingLog();
    const inf = informer(m, 'ConfigMap', { timers: new FakeTimers(), log });
    inf.addHandler({
      onAdd: () => {
        throw new Error('boom');
      },
    });
    const seen = seenBy(inf);
    await inf.start();
    await m.create(cm('a', '1'));
    expect(seen).toEqual(['add a@1']);
    expect(inf.size).toBe(1);
    expect(lines).toEqual(['error event handler threw: boom']);
  });

  it('start(): a forbidden first list fails at once; a busy server is waited out', async () => {
    const m = new ApiModel();
    const timers = new FakeTimers();
    m.faults.inject({ verbs: ['list'], reason: 'Forbidden', times: 1 });
    const forbidden = informer(m, 'ConfigMap', { timers });
    const err = await forbidden.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InformerStartError);
    expect(err).toMatchObject({ kind: 'ConfigMap', cause: { reason: 'Forbidden' } });
    expect(m.openWatches).toBe(0);

    m.faults.inject({ verbs: ['list'], reason: 'TooManyRequests', times: 2 });
    const busy = informer(m, 'ConfigMap', { timers });
    let synced = false;
    const started = busy.start().then(() => {
      synced = true;
    });
    await flush();
    timers.advance(1000); // Retry-After: 1 s
    await flush();
    expect(synced).toBe(false);
    timers.advance(1000);
    await flush();
    await started;
    expect(synced).toBe(true);
    expect(busy.stats.failures).toBe(2);
  });
});

describe('InformerCache over the ApiModel: indexes', () => {
  it('answers every query as the API server would, through its indexes, across updates and deletes', async () => {
    const clock = new ManualClock();
    const m = new ApiModel({ clock });
    const timers = new FakeTimers();
    const cache = new InformerCache(m, { timers });
    running.push(cache);
    cache.informerFor('Pod', { indexLabels: [LABEL_POOL, LABEL_STATE] });
    cache.informerFor('PodClaim', { indexFields: ['spec.podName', 'spec.sourcePod'] });
    await cache.start();
    // The same with a pool+state label set kept oldest first (as the controller has it).
    const ordered = new InformerCache(m, { timers });
    running.push(ordered);
    ordered.informerFor('Pod', {
      indexLabels: [LABEL_POOL, LABEL_STATE],
      indexLabelSets: [[LABEL_POOL, LABEL_STATE]],
    });
    ordered.informerFor('PodClaim', { indexFields: ['spec.podName', 'spec.sourcePod'] });
    await ordered.start();
    const rng = new Rng(7);
    // Its own randomness for times and page sizes, so the walk of changes stays the one it was.
    const rngPages = new Rng(8);
    const pick = <T>(xs: readonly T[]) => xs[rng.int(xs.length)]!;
    const namespaces = ['a', 'b'];
    const pods = ['p0', 'p1', 'p2', 'p3', 'p4'];
    const states = ['Idle', 'Bound', 'Draining'] as const;
    const queries: [Kind, ListOptions][] = [];
    for (const ns of [...namespaces, undefined]) {
      const nsOpt = ns === undefined ? {} : { namespace: ns };
      queries.push(['Pod', nsOpt], ['PodClaim', nsOpt]);
      for (const p of pods) {
        queries.push(['PodClaim', { ...nsOpt, fieldSelector: { 'spec.podName': p } }]);
        queries.push(['PodClaim', { ...nsOpt, fieldSelector: { 'spec.sourcePod': p } }]);
        // Two indexed fields (one answers, the other is checked), and an indexed and a plain one.
        queries.push(['PodClaim', { ...nsOpt, fieldSelector: { 'spec.podName': p, 'spec.sourcePod': p } }]);
        queries.push(['PodClaim', { ...nsOpt, fieldSelector: { 'spec.podName': p, 'metadata.name': 'c1' } }]);
        queries.push(['Pod', { ...nsOpt, fieldSelector: { 'metadata.name': p } }]);
        queries.push([
          'Pod',
          {
            ...nsOpt,
            labelSelector: { matchLabels: { [LABEL_STATE]: 'Idle' } },
            fieldSelector: { 'metadata.name': p },
          },
        ]);
      }
      queries.push(['PodClaim', { ...nsOpt, fieldSelector: { 'spec.sourcePod': '' } }]);
      for (const pool of ['x', 'y'])
        for (const s of states) {
          queries.push([
            'Pod',
            { ...nsOpt, labelSelector: { matchLabels: { [LABEL_POOL]: pool, [LABEL_STATE]: s } } },
          ]);
          queries.push(['Pod', { ...nsOpt, labelSelector: `${LABEL_POOL}=${pool},${LABEL_STATE}!=${s}` }]);
          // An unindexed label beside indexed ones, and equalities with expressions.
          queries.push([
            'Pod',
            { ...nsOpt, labelSelector: { matchLabels: { [LABEL_STATE]: s, tier: pool } } },
          ]);
          queries.push([
            'Pod',
            {
              ...nsOpt,
              labelSelector: {
                matchLabels: { [LABEL_POOL]: pool },
                matchExpressions: [{ key: LABEL_STATE, operator: 'In', values: [s, 'Bound'] }],
              },
            },
          ]);
        }
    }
    const names = (xs: { metadata: { namespace?: string; name: string } }[]) =>
      xs.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();
    /** Every oldest-first page of `reader`, walked with `limit`: the names and where each page ended. */
    const walk = async (reader: OldestFirstReader, opts: ListOptions, limit: number) => {
      const out: string[] = [];
      let after: OldestFirstKey | undefined;
      for (let i = 0; i < 100; i++) {
        const { labelSelector, namespace } = opts;
        const page = await reader.listOldestFirst('Pod', {
          ...(namespace !== undefined ? { namespace } : {}),
          ...(labelSelector !== undefined ? { labelSelector } : {}),
          limit,
          ...(after ? { after } : {}),
        });
        out.push(page.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).join(' '));
        if (!page.next) return out;
        after = page.next;
      }
      throw new Error('pages never end');
    };
    for (let step = 0; step < 150; step++) {
      // Pods created over a few seconds: oldest-first order has ties in time and in name.
      if (rngPages.chance(0.3)) clock.advance(1000);
      const ns = pick(namespaces);
      const r = rng.int(6);
      try {
        if (r === 0)
          await m.create(
            forCreate(
              pod(
                pick(pods),
                inNamespace(ns),
                inPool(pick(['x', 'y'])),
                withState(pick(states)),
                ...(rng.chance(0.5) ? [withLabels({ tier: pick(['x', 'y']) })] : []),
              ),
            ),
          );
        else if (r === 1)
          await m.patch('Pod', k(pick(pods), ns), {
            metadata: { labels: { [LABEL_STATE]: pick(states), [LABEL_POOL]: pick(['x', 'y']) } },
          });
        else if (r === 2) await m.delete('Pod', k(pick(pods), ns), { gracePeriodSeconds: 0 });
        else if (r === 3)
          await m.create(forCreate(podClaim(`c${rng.int(4)}`, inNamespace(ns), boundTo(pick(pods), 'n1'))));
        else if (r === 4)
          await m.patch('PodClaim', k(`c${rng.int(4)}`, ns), {
            spec: rng.chance(0.5) ? { podName: pick(pods), sourcePod: pick(pods) } : { sourcePod: '' },
          });
        else await m.delete('PodClaim', k(`c${rng.int(4)}`, ns));
      } catch (e) {
        if (!(e instanceof ApiError)) throw e; // NotFound / AlreadyExists are part of the walk
      }
      for (const [kind, opts] of queries) {
        const want = m.listNow(kind, opts);
        for (const c of [cache, ordered]) {
          const got = (await c.list(kind, opts)).items;
          expect(names(got), `step ${step}: ${kind} ${JSON.stringify(opts)}`).toEqual(names(want));
          for (const o of got) expect(matchesList(o, opts)).toBe(true);
        }
        // Oldest-first pages answer as the model's do, through the ordered index or without it.
        if (kind === 'Pod' && opts.fieldSelector === undefined) {
          const limit = 1 + rngPages.int(3);
          const expected = await walk(m, opts, limit);
          expect(await walk(ordered, opts, limit), `step ${step}: ${JSON.stringify(opts)}`).toEqual(expected);
          expect(await walk(cache, opts, limit)).toEqual(expected);
        }
      }
    }
  });

  it('lists share one frozen array until what they read changes, so none copies and none mutates the store', async () => {
    const m = new ApiModel();
    const cache = new InformerCache(m, { timers: new FakeTimers() });
    running.push(cache);
    cache.informerFor('Pod', { indexLabels: [LABEL_POOL] });
    await cache.start();
    await m.create(forCreate(pod('a', inNamespace(NS), inPool('x'))));
    await m.create(forCreate(pod('b', inNamespace(NS), inPool('y'))));
    const byPool = { namespace: NS, labelSelector: { matchLabels: { [LABEL_POOL]: 'x' } } };
    const first = (await cache.list('Pod', byPool)).items;
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => first.push(first[0]!)).toThrow(TypeError);
    expect((await cache.list('Pod', byPool)).items).toBe(first);
    const all = (await cache.list('Pod', { namespace: NS })).items;
    expect((await cache.list('Pod', { namespace: NS })).items).toBe(all);
    // Another pool's change leaves this bucket's array as it was; a change in it replaces it.
    await m.patch('Pod', k('b'), { metadata: { labels: { tier: 't' } } });
    expect((await cache.list('Pod', byPool)).items).toBe(first);
    expect((await cache.list('Pod', { namespace: NS })).items).not.toBe(all);
    await m.patch('Pod', k('a'), { metadata: { labels: { tier: 't' } } });
    const after = (await cache.list('Pod', byPool)).items;
    expect(after).not.toBe(first);
    expect(after.map((p) => p.metadata.labels?.tier)).toEqual(['t']);
    expect(first.map((p) => p.metadata.labels?.tier)).toEqual([undefined]);
    // Filtered lists are frozen too: every list from the cache behaves alike.
    expect(Object.isFrozen((await cache.list('Pod', { namespace: NS, labelSelector: 'tier=t' })).items)).toBe(
      true,
    );
  });

  it('a computed index (IndexField with an extractor) answers a field selector no path holds', async () => {
    const m = new ApiModel();
    const cache = new InformerCache(m, { timers: new FakeTimers() });
    running.push(cache);
    cache.indexField('PodClaim', 'references', (c: PodClaim) =>
      [c.status?.podName, c.status?.sourcePod].filter((p): p is string => !!p),
    );
    await cache.start();
    await put(m, podClaim('new', inNamespace(NS), boundTo('p1', 'n1'), migratingFrom('p0')));
    await put(m, podClaim('old', inNamespace(NS), boundTo('p0', 'n1')));
    await put(m, podClaim('other', inNamespace(NS), boundTo('p2', 'n1')));
    const refs = async (p: string) =>
      (await cache.list('PodClaim', { namespace: NS, fieldSelector: { references: p } })).items
        .map((c) => c.metadata.name)
        .sort();
    expect(await refs('p0')).toEqual(['new', 'old']);
    await m.patchStatus('PodClaim', k('new'), { status: { sourcePod: null } });
    expect(await refs('p0')).toEqual(['old']);
    await m.delete('PodClaim', k('old'));
    expect(await refs('p0')).toEqual([]);
    expect(await refs('p1')).toEqual(['new']);
  });

  it('reads kinds without an informer live when given a live reader, else refuses', async () => {
    const m = new ApiModel();
    await m.create(cm('live', '1', withLabels({ a: 'b' })));
    const withLive = new InformerCache(m, { live: m, timers: new FakeTimers() });
    expect((await withLive.get('ConfigMap', k('live'))).data).toEqual({ v: '1' });
    const without = new InformerCache(m, { timers: new FakeTimers() });
    await expect(without.list('ConfigMap')).rejects.toThrow(/no informer for ConfigMap/);
    without.informerFor('ConfigMap');
    running.push(without);
    await without.start();
    await expect(without.get('ConfigMap', k('nope'))).rejects.toMatchObject({ reason: 'NotFound' });
    expect((await without.get('ConfigMap', k('live'))).data).toEqual({ v: '1' });
  });
});
