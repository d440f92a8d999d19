// @claimkit/kube against the real API server: core's API-model conformance cases through the
// client-node adapter (so the in-memory model cannot drift from the server), the watch port and
// informers (sync, events, indexes, resume after the watchdog), leader election with two electors,
// and event recording. (A real 410 needs a compacted etcd; the informer's 410 path is covered over
// the wire format in packages/kube and over the ApiModel.)
import { type ConfigMap, type KubeEvent, type Lease, toMicroTime } from '@claimkit/core';
import { conformanceCases, conformanceEnv } from '@claimkit/core/model';
import {
  createKubeClient,
  Informer,
  InformerCache,
  type KubeClient,
  KubeEventRecorder,
  LeaderElector,
  loadKubeConfig,
  type RequestVerb,
} from '@claimkit/kube';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './harness/index.ts';
import { createTestNamespace, deleteTestNamespace, e2eCluster, useTestNamespace } from './harness/vitest.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const requests: [RequestVerb, string, number][] = [];
let client: KubeClient;

beforeAll(() => {
  client = createKubeClient(loadKubeConfig({ kubeconfig: e2eCluster().kubeconfigPath }), {
    onRequest: (verb, kind, code) => requests.push([verb, kind, code]),
  });
});

describe('API-model conformance cases on the real API server (through @claimkit/kube)', () => {
  const namespaces: string[] = [];
  afterAll(async () => {
    await Promise.all(namespaces.map((n) => deleteTestNamespace(n).catch(() => undefined)));
  });
  const env = conformanceEnv({ sleep, now: () => Date.now(), timeoutMs: 60_000, intervalMs: 250 });
  for (const c of conformanceCases) {
    it(c.name, async () => {
      const ns = await createTestNamespace('conf');
      namespaces.push(ns);
      await c.run(client, ns, env);
    });
  }
});

function cm(
  ns: string,
  name: string,
  labels: Record<string, string>,
  data: Record<string, string> = {},
): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name, labels }, data };
}

describe('merge patch fencing on the real server', () => {
  const ns = useTestNamespace('kube-fence');

  it('a stale metadata.resourceVersion and another metadata.uid are both 409 Conflict', async () => {
    const a = await client.create(cm(ns.name, 'fenced', {}, { v: '1' }));
    const k = { namespace: ns.name, name: 'fenced' };
    await client.patch('ConfigMap', k, { data: { v: '2' } });
    const stale = await client
      .patch('ConfigMap', k, { data: { v: 'x' } }, { resourceVersion: a.metadata.resourceVersion! })
      .catch((e) => e);
    expect([stale.reason, stale.code]).toEqual(['Conflict', 409]);
    const uid = await client
      .patch('ConfigMap', k, { data: { v: 'x' } }, { uid: '00000000-0000-4000-8000-000000000000' })
      .catch((e) => e);
    expect([uid.reason, uid.code]).toEqual(['Conflict', 409]);
    expect(uid.message).toMatch(/Precondition failed: UID/);
    const del = await client
      .delete('ConfigMap', k, { preconditions: { resourceVersion: a.metadata.resourceVersion! } })
      .catch((e) => e);
    expect([del.reason, del.code]).toEqual(['Conflict', 409]);
    expect((await client.get('ConfigMap', k)).data).toEqual({ v: '2' });
  });
});

describe('informers', () => {
  const ns = useTestNamespace('kube-informer');

  it('sync, add/update/delete events with old and new objects, Reader over the cache', async () => {
    await client.create(cm(ns.name, 'pre', { inf: 'yes' }, { v: '0' }));
    await client.create(cm(ns.name, 'unlabelled', {}));
    const cache = new InformerCache(client, { namespace: ns.name });
    const inf = cache.informerFor('ConfigMap', { labelSelector: 'inf=yes' });
    const seen: string[] = [];
    inf.addHandler({
      onAdd: (o) => seen.push(`add ${o.metadata.name} ${o.data?.v}`),
      onUpdate: (a, b) => seen.push(`update ${b.metadata.name} ${a.data?.v}->${b.data?.v}`),
      onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
    });
    try {
      await cache.start();
      expect(cache.hasSynced()).toBe(true);
      expect(seen).toEqual(['add pre 0']);
      await client.create(cm(ns.name, 'a', { inf: 'yes' }, { v: '1' }));
      await client.patch('ConfigMap', { namespace: ns.name, name: 'a' }, { data: { v: '2' } });
      await client.delete('ConfigMap', { namespace: ns.name, name: 'pre' });
      await waitFor('informer events', () => seen.length >= 4, { timeoutMs: 20_000 });
      expect(seen).toEqual(['add pre 0', 'add a 1', 'update a 1->2', 'delete pre']);
      const got = await cache.get('ConfigMap', { namespace: ns.name, name: 'a' });
      expect(got.data).toEqual({ v: '2' });
      await expect(cache.get('ConfigMap', { namespace: ns.name, name: 'pre' })).rejects.toMatchObject({
        reason: 'NotFound',
      });
      const l = await cache.list('ConfigMap', {
        namespace: ns.name,
        fieldSelector: { 'metadata.name': 'a' },
      });
      expect(l.items.map((o) => o.metadata.name)).toEqual(['a']);
      expect(Number(l.resourceVersion)).toBeGreaterThan(0);
    } finally {
      cache.stop();
    }
  });

  it('indexes on a label and a field answer lists as the server does', async () => {
    await client.create(cm(ns.name, 'ix-1', { tier: 'gold' }, { owner: 'x' }));
    await client.create(cm(ns.name, 'ix-2', { tier: 'gold' }, { owner: 'y' }));
    await client.create(cm(ns.name, 'ix-3', { tier: 'iron' }, { owner: 'x' }));
    const cache = new InformerCache(client, { namespace: ns.name });
    cache.informerFor('ConfigMap', { indexLabels: ['tier'], indexFields: ['data.owner'] });
    try {
      await cache.start();
      await client.patch('ConfigMap', { namespace: ns.name, name: 'ix-2' }, { data: { owner: 'x' } });
      await client.delete('ConfigMap', { namespace: ns.name, name: 'ix-1' });
      const live = (await client.list('ConfigMap', { namespace: ns.name, labelSelector: 'tier=gold' })).items;
      await waitFor('the cache to catch up', async () => {
        const cached = await cache.list('ConfigMap', { namespace: ns.name, labelSelector: 'tier=gold' });
        return cached.items.map((o) => o.metadata.name).join() === live.map((o) => o.metadata.name).join();
      });
      const owned = await cache.list('ConfigMap', {
        namespace: ns.name,
        labelSelector: { matchLabels: { tier: 'gold' } },
        fieldSelector: { 'data.owner': 'x' },
      });
      expect(owned.items.map((o) => o.metadata.name)).toEqual(['ix-2']);
    } finally {
      cache.stop();
    }
  });

  it('a quiet watch ended by the watchdog resumes from its resourceVersion without relisting', async () => {
    const inf = new Informer(client, 'ConfigMap', {
      namespace: ns.name,
      labelSelector: 'quiet=yes',
      watchdogMs: 1000,
    });
    const seen: string[] = [];
    inf.addHandler({ onAdd: (o) => seen.push(o.metadata.name) });
    try {
      await inf.start();
      await sleep(2600); // two watchdog restarts (at about 1 s and 2 s of silence)
      await client.create(cm(ns.name, 'after-quiet', { quiet: 'yes' }));
      await waitFor('the event after the restarts', () => seen.includes('after-quiet'), {
        timeoutMs: 20_000,
      });
      expect(inf.stats.lists).toBe(1);
      expect(inf.stats.watches).toBeGreaterThanOrEqual(3);
      expect(inf.stats.watchdogRestarts).toBeGreaterThanOrEqual(2);
    } finally {
      inf.stop();
    }
  });
});

describe('leader election on a Lease', () => {
  const ns = useTestNamespace('kube-leader');

  it('one of two electors leads; the other takes over when the first stops (release)', async () => {
    const log: string[] = [];
    const mk = (id: string) =>
      new LeaderElector(client, {
        namespace: ns.name,
        name: 'claimkit-e2e',
        identity: id,
        leaseDurationSeconds: 4,
        renewDeadlineSeconds: 3,
        retryPeriodSeconds: 0.3,
        onStartedLeading: () => log.push(`${id} started`),
        onStoppedLeading: () => log.push(`${id} stopped`),
      });
    const a = mk('a');
    const b = mk('b');
    a.start();
    await waitFor('a to lead', () => a.isLeader(), { timeoutMs: 10_000 });
    b.start();
    await waitFor('b to see a', () => b.leader === 'a', { timeoutMs: 10_000 });
    await sleep(1000);
    expect(b.isLeader()).toBe(false);
    const lease = await client.get('Lease', { namespace: ns.name, name: 'claimkit-e2e' });
    expect(lease.spec.holderIdentity).toBe('a');
    expect(lease.spec.renewTime).toMatch(/\.\d{6}Z$/);
    const t0 = Date.now();
    await a.stop();
    await waitFor('b to lead', () => b.isLeader(), { timeoutMs: 10_000 });
    // Released: b does not wait for the 4 s lease to expire.
    expect(Date.now() - t0).toBeLessThan(3000);
    await b.stop();
    expect(log).toEqual(['a started', 'a stopped', 'b started', 'b stopped']);
  });

  it('an expired lease of a vanished holder is taken over', async () => {
    const old = Date.now() - 60_000;
    const ghost: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { namespace: ns.name, name: 'ghosted' },
      spec: {
        holderIdentity: 'ghost',
        leaseDurationSeconds: 10,
        acquireTime: toMicroTime(old),
        renewTime: toMicroTime(old),
        leaseTransitions: 0,
      },
    };
    await client.create(ghost);
    const c = new LeaderElector(client, {
      namespace: ns.name,
      name: 'ghosted',
      identity: 'c',
      retryPeriodSeconds: 0.3,
    });
    c.start();
    try {
      await waitFor('c to lead', () => c.isLeader(), { timeoutMs: 10_000 });
      const l = await client.get('Lease', { namespace: ns.name, name: 'ghosted' });
      expect([l.spec.holderIdentity, l.spec.leaseTransitions]).toEqual(['c', 1]);
    } finally {
      await c.stop();
    }
    expect((await client.get('Lease', { namespace: ns.name, name: 'ghosted' })).spec.holderIdentity).toBe('');
  });
});

describe('event recording', () => {
  const ns = useTestNamespace('kube-events');

  it('writes a core/v1 Event and aggregates repeats into count', async () => {
    const errors: unknown[] = [];
    const rec = new KubeEventRecorder(client, {
      component: 'claimkit-e2e',
      instance: 'pod-1',
      onError: (e) => errors.push(e),
    });
    const target = await client.create(cm(ns.name, 'target', {}));
    const spec = {
      regarding: {
        kind: 'ConfigMap' as const,
        namespace: ns.name,
        name: 'target',
        uid: target.metadata.uid!,
      },
      type: 'Normal' as const,
      reason: 'Tested',
      message: 'an event from the e2e suite',
    };
    await rec.record(spec);
    await rec.record(spec);
    await rec.record({ ...spec, type: 'Warning', reason: 'Other', message: 'another' });
    expect(errors).toEqual([]);
    const events = (await client.list('Event', { namespace: ns.name })).items as KubeEvent[];
    const mine = events
      .filter((e) => e.involvedObject.name === 'target')
      .sort((x, y) => x.reason.localeCompare(y.reason));
    expect(mine.map((e) => [e.reason, e.type, e.count, e.source?.component])).toEqual([
      ['Other', 'Warning', 1, 'claimkit-e2e'],
      ['Tested', 'Normal', 2, 'claimkit-e2e'],
    ]);
    expect(mine[1]!.involvedObject).toMatchObject({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      uid: target.metadata.uid,
    });
    // Failures never throw: an event in a namespace that does not exist is reported to onError.
    await rec.record({ ...spec, regarding: { ...spec.regarding, namespace: 'no-such-namespace-xyz' } });
    expect(errors.length).toBe(1);
  });

  it('every request was counted by verb, kind and code', () => {
    expect(requests.some(([v, k, c]) => v === 'create' && k === 'Event' && c === 201)).toBe(true);
    expect(requests.some(([v, , c]) => v === 'watch' && c === 200)).toBe(true);
    expect(requests.some(([v, k, c]) => v === 'get' && k === 'ConfigMap' && c === 404)).toBe(true);
  });
});
