// The whole controller loop on core's in-memory API model: real writes, real conflicts, real
// watches; invariants checked at the end of every scenario.
import {
  ANNOTATION_SHARD,
  ANNOTATION_SOURCE_REF,
  ANNOTATION_SOURCE_TOKEN,
  ApiError,
  acquireCapture,
  type Capture,
  type Client,
  completeCapture,
  keyOf,
  type Pod,
  type PodClaim,
  type PodClaimSet,
  type PodPool,
} from '@claimkit/core';
import { ApiModel, SimCaptureAgent, schemaModelOptions } from '@claimkit/core/model';
import { checkConvergence, checkSafety } from '@claimkit/core/testing';
import { KubeEventRecorder, LeaderElector } from '@claimkit/kube';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonLogger } from './log.ts';
import { Manager } from './manager.ts';
import type { ManagerConfig, ManagerOptions } from './manager-options.ts';
import { kubelet, model, running, stopRunning, testConfig, until } from './testing/loop-harness.ts';

const NS = 'ns1';
afterEach(stopRunning);

async function startManager(
  m: ApiModel,
  extra: Partial<ManagerOptions> = {},
  config: Partial<ManagerConfig> = {},
) {
  const mgr = new Manager({
    config: testConfig({ concurrency: 4, sweepInterval: 200, resyncInterval: 1000, ...config }),
    client: m,
    source: m,
    ...extra,
  });
  running.push(mgr);
  await mgr.start();
  return mgr;
}

function state(m: ApiModel) {
  return { captures: m.listNow('Capture'), pods: m.listNow('Pod'), claims: m.listNow('PodClaim') };
}
function expectInvariants(m: ApiModel) {
  expect(checkSafety(state(m))).toEqual([]);
  expect(checkConvergence(state(m), Date.now())).toEqual([]);
}
async function settled(m: ApiModel, ms = 10_000) {
  await until('convergence', () => checkConvergence(state(m), Date.now()).length === 0, ms);
}

const pool = (minIdle = 2, drainSeconds = 0): PodPool => ({
  apiVersion: 'claimkit.dev/v1alpha1',
  kind: 'PodPool',
  metadata: { name: 'web', namespace: NS },
  spec: {
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image: 'web:1' }] },
    },
    minIdle,
    maxPods: 20,
    releasePolicy: 'Recycle',
    drainSeconds,
  },
});
const claimSet = (replicas: number): PodClaimSet => ({
  apiVersion: 'claimkit.dev/v1alpha1',
  kind: 'PodClaimSet',
  metadata: { name: 'set', namespace: NS },
  spec: {
    replicas,
    selector: { matchLabels: { 'claimkit.dev/claim-set': 'set' } },
    template: { metadata: { labels: { 'claimkit.dev/claim-set': 'set' } }, spec: { poolName: 'web' } },
  },
});
const bound = (m: ApiModel) =>
  m.listNow('PodClaim', { namespace: NS }).filter((c) => c.status?.phase === 'Bound');

describe('Manager on the in-memory API model', () => {
  it('binds a claim set from a pool, replaces a lost pod, scales in, with every invariant kept', async () => {
    const m = model();
    kubelet(m);
    const mgr = await startManager(m);
    expect(mgr.ready).toBe(true);
    await m.create(pool(2));
    await m.create(claimSet(2));
    await until('2 bound claims', () => bound(m).length === 2);
    await settled(m);
    // P2: delete a bound pod; the claim goes Lost and binds another Idle pod.
    const victim = bound(m)[0]!;
    const oldPod = victim.status!.podName!;
    await m.delete('Pod', { namespace: NS, name: oldPod });
    await until('claim rebinds', () => {
      const c = m.tryGetNow('PodClaim', keyOf(victim));
      return c?.status?.phase === 'Bound' && c.status?.podName && c.status?.podName !== oldPod;
    });
    // Scale in to 1.
    await m.patch('PodClaimSet', { namespace: NS, name: 'set' }, { spec: { replicas: 1 } });
    await until('one claim', () => m.listNow('PodClaim', { namespace: NS }).length === 1);
    await settled(m);
    expectInvariants(m);
    expect(mgr.metrics.reconciles.total({ kind: 'PodClaim' })).toBeGreaterThan(0);
    expect(mgr.metrics.registry.render()).toMatch(/claimkit_podclaims\{phase="Bound"\} 1/);
    expect(mgr.metrics.apiRequests.total({ verb: 'patch', resource: 'Pod' })).toBeGreaterThan(0);
  });

  it('two replicas at once (no leader election) keep every invariant', async () => {
    const m = model();
    kubelet(m);
    await startManager(m);
    await startManager(m);
    await m.create(pool(3));
    await m.create(claimSet(4));
    await until('4 bound claims', () => bound(m).length === 4);
    for (const c of bound(m).slice(0, 2)) await m.delete('Pod', { namespace: NS, name: c.status!.podName! });
    await m.patch('PodClaimSet', { namespace: NS, name: 'set' }, { spec: { replicas: 2 } });
    const safety: unknown[] = [];
    const t = setInterval(() => safety.push(...checkSafety(state(m))), 2);
    try {
      await until('2 bound claims', () => bound(m).length === 2 && m.listNow('PodClaim').length === 2);
      await settled(m);
    } finally {
      clearInterval(t);
    }
    expect(safety).toEqual([]);
    expectInvariants(m);
  });

  it('a deleted holder is taken over on the pod event, not at lease expiry (Http backend)', async () => {
    const m = model();
    kubelet(m);
    const agent = new SimCaptureAgent(() => Date.now());
    agent.nextDurationMs = 60_000;
    const mgr = await startManager(m, { backend: agent });
    const mkPod = (name: string): Pod => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS, labels: { app: 'db' } },
      spec: { containers: [{ name: 'main', image: 'db:1' }] },
    });
    await m.create(mkPod('db-0'));
    await m.create(mkPod('db-1'));
    const cap: Capture = {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'Capture',
      metadata: { name: 'snap', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'db' } },
        leaseSeconds: 3000,
        timeoutSeconds: 1800,
        maxAttempts: 3,
        backend: { type: 'Http', url: 'http://agent' },
      },
    };
    await m.create(cap);
    const first = await until('a job', () => {
      const c = m.tryGetNow('Capture', { namespace: NS, name: 'snap' });
      return c?.status?.claim?.job ? c.status.claim : undefined;
    });
    await m.delete('Pod', { namespace: NS, name: first.holder.name });
    const t0 = Date.now();
    const next = await until('takeover', () => {
      const c = m.tryGetNow('Capture', { namespace: NS, name: 'snap' });
      return c?.status?.claim && c.status.claim.token > first.token ? c.status.claim : undefined;
    });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(next.holder.name).not.toBe(first.holder.name);
    expect(agent.tokenViolations()).toEqual([]);
    expect(mgr.metrics.takeovers.total()).toBeGreaterThanOrEqual(1);
    expectInvariants(m);
  });

  it('with leader election only the leader reconciles; on release the other takes over', async () => {
    const m = model();
    kubelet(m);
    const mk = (identity: string) =>
      new LeaderElector(m as Client, {
        namespace: 'kube-system',
        name: 'claimkit-controller',
        identity,
        retryPeriodSeconds: 0.05,
        leaseDurationSeconds: 2,
        renewDeadlineSeconds: 1,
      });
    const e1 = mk('a');
    const a = await startManager(m, { elector: e1 });
    await until('a leads', () => a.leading);
    const b = await startManager(m, { elector: mk('b') });
    await m.create(pool(1));
    await until('an idle pod', () => m.listNow('Pod', { namespace: NS }).length === 1);
    expect(b.leading).toBe(false);
    expect(b.reconciles).toBe(0);
    await a.stop();
    await until('b leads', () => b.leading, 5000);
    await m.create({ ...claimSet(1) });
    await until('bound', () => bound(m).length === 1);
    expect(
      m.getNow('Lease', { namespace: 'kube-system', name: 'claimkit-controller' }).spec.holderIdentity,
    ).toBe('b');
    expectInvariants(m);
  });

  it('leader pod deleted without releasing the lease (SIGKILL): the standby, caches synced, binds new claims within 2 s, not after the 15 s lease', async () => {
    const m = model();
    kubelet(m);
    const SYS = 'claimkit-system';
    // The two controller pods, as the downward API describes them to each replica.
    const ctlPod = async (name: string) => {
      await m.create<Pod>({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { namespace: SYS, name },
        spec: { containers: [{ name: 'controller', image: 'controller' }], nodeName: 'node-1' },
      });
      return m.setPodStatusNow(
        { namespace: SYS, name },
        {
          phase: 'Running',
          containerStatuses: [
            {
              name: 'controller',
              containerID: `containerd://${name}`,
              restartCount: 0,
              state: { running: { startedAt: new Date().toISOString() } },
            },
          ],
        },
      );
    };
    let killed = false;
    // After the kill the leader's process makes no more requests: it neither renews nor releases.
    const killable = new Proxy(m, {
      get(t, p, r) {
        const v = Reflect.get(t, p, r);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) =>
          killed ? Promise.reject(new ApiError('Unavailable', 'killed')) : v.apply(t, args);
      },
    });
    const mk = async (identity: string, client: ApiModel) => {
      const pod = await ctlPod(identity);
      // The shipped defaults: 15 s lease, 2 s retry period.
      return new LeaderElector(client as Client, {
        namespace: SYS,
        name: 'claimkit-controller',
        identity,
        pod: { namespace: SYS, name: identity, uid: pod.metadata.uid!, container: 'controller' },
      });
    };
    const a = await startManager(m, { elector: await mk('ctl-a', killable) });
    await until('a leads', () => a.leading);
    const eb = await mk('ctl-b', m);
    const b = await startManager(m, { elector: eb });
    await m.create(pool(1));
    await until('a ready idle pod', () =>
      m.listNow('Pod', { namespace: NS }).some((p) => p.status?.phase === 'Running'),
    );
    await until('b follows a', () => eb.leader === 'ctl-a');
    expect(b.leading).toBe(false);
    killed = true;
    await a.stop();
    const t0 = Date.now();
    await m.delete('Pod', { namespace: SYS, name: 'ctl-a' }, { gracePeriodSeconds: 0 });
    await m.create({ ...claimSet(1) });
    await until('bound by the standby', () => bound(m).length === 1, 2000);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(b.leading).toBe(true);
    expect(b.metrics.leader.get()).toBe(1);
    const lease = m.getNow('Lease', { namespace: SYS, name: 'claimkit-controller' });
    expect(lease.spec.holderIdentity).toBe('ctl-b');
    expect(lease.metadata.annotations?.['claimkit.dev/holder-pod']).toBe(`${SYS}/ctl-b`);
    expectInvariants(m);
  });

  it("routes pod events through core's mapEvent and reference index: a stripped, deleted pod reaches its claim", async () => {
    const m = model();
    kubelet(m);
    // No resync: only routed events can bring the claim back to its pod.
    const mgr = await startManager(m, {}, { resyncInterval: 0 });
    await m.create(pool(1));
    await m.create(claimSet(1));
    const c = (await until('bound', () => bound(m)[0])) as PodClaim;
    const podName = c.status!.podName!;
    expect(
      mgr.references.referencingIncludingDeleting(NS, podName).map((r) => r.claim.metadata.name),
    ).toEqual([c.metadata.name]);
    // The seed's legacy writer: strip the claimed-by label, then delete the pod.
    await m.patch(
      'Pod',
      { namespace: NS, name: podName },
      { metadata: { labels: { 'claimkit.dev/claimed-by': null } } },
    );
    await m.delete('Pod', { namespace: NS, name: podName }, { gracePeriodSeconds: 0 });
    await until(
      'the claim lets the gone pod go',
      () => m.getNow('PodClaim', keyOf(c)).status?.podName !== podName,
    );
    await until('bound again', () => bound(m)[0]?.status?.podName);
    expect(mgr.references.referencingIncludingDeleting(NS, podName)).toEqual([]);
    await settled(m);
    expectInvariants(m);
  });

  it('watches that fail and then find their version expired (410) relist; the change missed meanwhile still arrives', async () => {
    const m = new ApiModel({ clock: { now: () => Date.now() }, ...schemaModelOptions(), eventWindow: 20 });
    kubelet(m);
    // No resync: only the informers' relist can tell the claim that its pod is gone.
    const mgr = await startManager(m, {}, { resyncInterval: 0 });
    await m.create(pool(1));
    await m.create(claimSet(1));
    const c = (await until('bound', () => bound(m)[0])) as PodClaim;
    const podName = c.status!.podName!;
    await settled(m);
    // The API server restarts: every watch fails; meanwhile the pod goes and the window moves on.
    m.closeWatches({ error: new ApiError('Unavailable', 'apiserver restarting') });
    await m.delete('Pod', { namespace: NS, name: podName }, { gracePeriodSeconds: 0 });
    for (let i = 0; i < 25; i++) {
      await m.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace: 'noise', name: `n${i}` },
      });
    }
    await until('bound to another pod', () => {
      const now = m.tryGetNow('PodClaim', keyOf(c));
      return now?.status?.phase === 'Bound' && now.status?.podName !== podName;
    });
    expect(mgr.cache.informer('Pod')?.stats.relists).toBeGreaterThanOrEqual(1);
    expect(mgr.cache.informer('PodClaim')?.stats.relists).toBeGreaterThanOrEqual(1);
    await settled(m);
    expectInvariants(m);
  });

  it('a finalizer completes for a claim deleted mid-migration', async () => {
    const m = model();
    kubelet(m);
    await startManager(m);
    await m.create(pool(2, 600));
    await m.create(claimSet(1));
    const c = (await until('bound', () => bound(m)[0])) as PodClaim;
    await until('an idle pod', () =>
      m.listNow('Pod', { namespace: NS }).some((p) => p.metadata.labels?.['claimkit.dev/state'] === 'Idle'),
    );
    await m.patch('PodClaim', keyOf(c), { metadata: { annotations: { 'claimkit.dev/migrate': 'test' } } });
    await until('migrating', () => m.tryGetNow('PodClaim', keyOf(c))?.status?.sourcePod);
    await m.delete('PodClaim', keyOf(c));
    const t0 = Date.now();
    await until('claim gone', () => !m.tryGetNow('PodClaim', keyOf(c)));
    expect(Date.now() - t0).toBeLessThan(1000);
    await settled(m);
    expectInvariants(m);
  });

  it('a node that is cordoned: its Idle pods are replaced (the Node watch triggers it) and claims bind elsewhere', async () => {
    const m = model();
    const node = (name: string) => ({
      apiVersion: 'v1' as const,
      kind: 'Node' as const,
      metadata: { name, namespace: '' },
      spec: {},
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    for (const n of ['node-1', 'node-2']) {
      await m.create(node(n));
      // As a kubelet reports it (status is a subresource: create drops it).
      await m.patchStatus('Node', { namespace: '', name: n }, { status: node(n).status });
    }
    let cordoned = false;
    kubelet(m, () => (cordoned ? 'node-2' : 'node-1'));
    // No periodic resync: only the Node event can bring the pool back.
    const mgr = await startManager(m, {}, { resyncInterval: 0, poolCoalesce: 10 });
    await m.create(pool(2));
    const idleOn = (n: string) =>
      m
        .listNow('Pod', { namespace: NS })
        .filter(
          (p) =>
            p.metadata.labels?.['claimkit.dev/state'] === 'Idle' &&
            !p.metadata.deletionTimestamp &&
            p.spec.nodeName === n &&
            p.status?.phase === 'Running',
        );
    await until('2 Idle pods on node-1', () => idleOn('node-1').length === 2);
    await until('pool settled', () => m.getNow('PodPool', { namespace: NS, name: 'web' }).status?.idle === 2);
    cordoned = true;
    await m.patch('Node', { namespace: '', name: 'node-1' }, { spec: { unschedulable: true } });
    await until(
      '2 Idle pods on node-2, none left on node-1',
      () => idleOn('node-2').length === 2 && idleOn('node-1').length === 0,
    );
    await m.create(claimSet(2));
    const claims = await until('2 bound', () => (bound(m).length === 2 ? bound(m) : undefined));
    for (const c of claims)
      expect(m.getNow('Pod', { namespace: NS, name: c.status!.podName! }).spec.nodeName).toBe('node-2');
    expect(
      mgr.memory.expectations.observe(
        m.getNow('PodPool', { namespace: NS, name: 'web' }).metadata.uid!,
        new Map(m.listNow('Pod').map((p) => [p.metadata.name, p])),
        Date.now(),
      ),
    ).toMatchObject({ creates: 0 });
    await settled(m);
    expectInvariants(m);
  });

  it('a pool seeded from a Capture creates no pods until the fenced result, whose change (routed by mapEvent, no resync) seeds them', async () => {
    const m = model();
    kubelet(m);
    // No periodic resync, and the pool's own look-again is 30 s away: only the Capture's event can wake it.
    await startManager(m, {}, { resyncInterval: 0, poolCoalesce: 10 });
    await m.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'worker', namespace: NS, labels: { app: 'worker' } },
      spec: { containers: [{ name: 'main', image: 'worker:1' }] },
    } as Pod);
    const key = { namespace: NS, name: 'snap' };
    await m.create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'Capture',
      metadata: { name: 'snap', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'worker' } },
        leaseSeconds: 3000,
        timeoutSeconds: 1800,
        maxAttempts: 3,
        backend: { type: 'External' },
      },
    } satisfies Capture);
    await m.create({ ...pool(2), spec: { ...pool(2).spec, source: { captureName: 'snap' } } });
    const sourceReady = () =>
      m
        .getNow('PodPool', { namespace: NS, name: 'web' })
        .status?.conditions?.find((c) => c.type === 'SourceReady');
    await until('SourceReady False (NotCaptured)', () => sourceReady()?.reason === 'NotCaptured');
    const worker = await until('a Ready worker', () => {
      const w = m.getNow('Pod', { namespace: NS, name: 'worker' });
      return w.status?.phase === 'Running' ? w : undefined;
    });
    // Quiet first (nothing queued from the pool's creation), so what follows is the Capture's event alone.
    const before = m.writes.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(m.writes.slice(before).filter((w) => w.kind === 'PodPool')).toEqual([]);
    const { capture } = await acquireCapture(m, key, { name: 'worker', uid: worker.metadata.uid! }, Date.now);
    expect(
      m.listNow('Pod', { namespace: NS }).filter((p) => p.metadata.labels?.['claimkit.dev/pool']),
    ).toEqual([]);
    await completeCapture(m, key, capture.status!.claim!.token, 'snap://ns1/snap/1', Date.now);
    const seeded = await until('2 seeded pool pods', () => {
      const pods = m
        .listNow('Pod', { namespace: NS })
        .filter((p) => p.metadata.labels?.['claimkit.dev/pool'] === 'web');
      return pods.length === 2 ? pods : undefined;
    });
    for (const p of seeded)
      expect(p.metadata.annotations).toMatchObject({
        [ANNOTATION_SOURCE_REF]: 'snap://ns1/snap/1',
        [ANNOTATION_SOURCE_TOKEN]: String(capture.status!.claim!.token),
      });
    await until('SourceReady True', () => sourceReady()?.status === 'True');
    await settled(m);
    expectInvariants(m);
  });

  it("a pool's status-only changes are coalesced (each status write no longer causes the next); a spec change reconciles at once", async () => {
    const m = model();
    kubelet(m);
    const coalesceMs = 2000;
    const mgr = await startManager(m, {}, { resyncInterval: 0, poolCoalesce: coalesceMs });
    await m.create(pool(2));
    const key = { namespace: NS, name: 'web' };
    await until('pool settled', () => m.getNow('PodPool', key).status?.idle === 2, 15_000);
    await settled(m);
    await new Promise((r) => setTimeout(r, coalesceMs + 200));
    const poolReconciles = () => mgr.metrics.reconciles.total({ kind: 'PodPool' });
    const before = poolReconciles();
    // Another writer's condition, five times in a row: one coalesced reconcile, not five.
    for (let i = 0; i < 5; i++) {
      await m.patchStatus('PodPool', key, {
        status: {
          conditions: [
            ...(m.getNow('PodPool', key).status?.conditions ?? []).filter((c) => c.type !== 'Audited'),
            {
              type: 'Audited',
              status: 'True',
              reason: `Round${i}`,
              message: '',
              lastTransitionTime: new Date().toISOString(),
            },
          ],
        },
      });
    }
    await new Promise((r) => setTimeout(r, coalesceMs / 4));
    expect(poolReconciles() - before).toBe(0);
    await until('the coalesced reconcile', () => poolReconciles() - before >= 1, coalesceMs * 3);
    await new Promise((r) => setTimeout(r, coalesceMs + 200));
    expect(poolReconciles() - before).toBe(1);
    // The other writer's condition is kept by the pool's own status writes.
    expect(m.getNow('PodPool', key).status?.conditions?.find((c) => c.type === 'Audited')?.reason).toBe(
      'Round4',
    );
    // A spec change is the pool's own event: reconciled at once, well inside the coalescing window.
    const t0 = Date.now();
    await m.patch('PodPool', key, { spec: { minIdle: 3 } });
    // (The pod's own events are coalesced for the pool, so count the pods, not the status.)
    const idlePods = () =>
      m
        .listNow('Pod', { namespace: NS })
        .filter((p) => p.metadata.labels?.['claimkit.dev/state'] === 'Idle' && !p.metadata.deletionTimestamp);
    await until('a third Idle pod created', () => idlePods().length === 3, coalesceMs);
    expect(Date.now() - t0).toBeLessThan(coalesceMs);
    await settled(m);
    expectInvariants(m);
  });
});

/**
 * The model as a client whose PodClaim writes take `ms` (a control plane whose storage slowed down);
 * `peak` is the most of them in flight at once.
 */
function slowClaimWrites(m: ApiModel, ms: number) {
  const seen = { inFlight: 0, peak: 0 };
  const client = new Proxy(m, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      if (!['update', 'updateStatus', 'patch', 'patchStatus'].includes(String(prop))) return v.bind(target);
      return async (...args: unknown[]) => {
        const kind = typeof args[0] === 'string' ? args[0] : (args[0] as { kind?: string }).kind;
        if (kind !== 'PodClaim') return v.apply(target, args);
        seen.peak = Math.max(seen.peak, ++seen.inFlight);
        try {
          await new Promise((r) => setTimeout(r, ms));
          return await v.apply(target, args);
        } finally {
          seen.inFlight--;
        }
      };
    },
  });
  return { client: client as Client, seen };
}

describe('Manager workers while the queue backs up (--max-concurrency)', () => {
  const claim = (i: number): PodClaim => ({
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodClaim',
    metadata: { name: `c${i}`, namespace: NS },
    spec: { poolName: 'web' },
  });

  it.each([
    [6, 'more workers while claims wait, back to --concurrency once the queue is empty'],
    [2, 'at most --concurrency: the workers stay fixed'],
  ])('--concurrency 2 --max-concurrency %i: %s', async (maxConcurrency, _what) => {
    const m = model();
    kubelet(m);
    const { client, seen } = slowClaimWrites(m, 150);
    const mgr = await startManager(m, { client }, { concurrency: 2, maxConcurrency });
    await m.create({ ...pool(12), spec: { ...pool(12).spec, maxPods: 30 } });
    await until(
      '12 Idle pods',
      () => m.listNow('Pod', { namespace: NS }).filter((p) => p.status?.phase === 'Running').length >= 12,
    );
    seen.peak = 0;
    for (let i = 0; i < 12; i++) await m.create(claim(i));
    await until('12 bound claims', () => bound(m).length === 12, 20_000);
    if (maxConcurrency > 2) expect(seen.peak).toBeGreaterThan(2);
    expect(seen.peak).toBeLessThanOrEqual(maxConcurrency);
    expect(mgr.metrics.crMaxConcurrent.get({ controller: 'podclaim' })).toBe(maxConcurrency);
    await until('the added workers stopped', () => mgr.metrics.workers.get() === 2);
    await settled(m);
    expectInvariants(m);
  });
});

describe('Manager Events in the background', () => {
  it('a burst of binds does not wait on its Events: at most 4 Event writes in flight, every Bound Event written after', async () => {
    const m = model();
    kubelet(m);
    // Event writes take 300 ms each (an API server slow on Events); binds are not slowed.
    const events = { inFlight: 0, peak: 0 };
    const slowEvents: Pick<Client, 'create' | 'patch'> = {
      create: async (o) => {
        events.peak = Math.max(events.peak, ++events.inFlight);
        try {
          await new Promise((r) => setTimeout(r, 300));
          return await m.create(o);
        } finally {
          events.inFlight--;
        }
      },
      patch: (kind, key, patch, pre) => m.patch(kind, key, patch, pre),
    };
    const mgr = await startManager(m, {
      recorder: new KubeEventRecorder(slowEvents, { component: 'claimkit-controller' }),
    });
    await m.create({ ...pool(12), spec: { ...pool(12).spec, maxPods: 30 } });
    await until(
      '12 Idle pods',
      () => m.listNow('Pod', { namespace: NS }).filter((p) => p.status?.phase === 'Running').length >= 12,
    );
    const boundEvents = () =>
      m.listNow('Event', { namespace: NS }).filter((e) => (e as { reason?: string }).reason === 'Bound')
        .length;
    const t0 = Date.now();
    for (let i = 0; i < 12; i++) {
      await m.create({
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'PodClaim',
        metadata: { name: `c${i}`, namespace: NS },
        spec: { poolName: 'web' },
      });
    }
    await until('12 bound claims', () => bound(m).length === 12, 10_000);
    // 12 Bound Events at 4 x 300 ms take 900 ms or more; the binds did not wait for them.
    expect(boundEvents()).toBeLessThan(12);
    await mgr.flushEvents();
    expect(boundEvents()).toBe(12);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(events.peak).toBeLessThanOrEqual(4);
    expect(events.peak).toBeGreaterThan(1);
    expect(mgr.metrics.eventsDropped.total()).toBe(0);
    await settled(m);
    expectInvariants(m);
  });
});

describe('Manager sharded by pool (--shard)', () => {
  // ns1/web hashes to shard 0 of 2 and ns1/warm to shard 1 (core's shardOfPool), the set to shard 1.
  const namedPool = (name: string, minIdle: number): PodPool => ({
    ...pool(minIdle),
    metadata: { name, namespace: NS },
  });
  const claimOn = (name: string, poolName: string): PodClaim => ({
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodClaim',
    metadata: { name, namespace: NS },
    spec: { poolName },
  });
  /** A model with a kubelet, managers for shards 0/2 and 1/2 on it, and their debug lines by shard. */
  async function twoShards() {
    const m = model();
    kubelet(m);
    const lines: { shard: number; l: Record<string, unknown> }[] = [];
    const shard = (index: number) =>
      startManager(
        m,
        { log: jsonLogger('debug', (l) => lines.push({ shard: index, l: JSON.parse(l) })) },
        { shard: { index, count: 2 } },
      );
    return { m, lines, shards: [await shard(0), await shard(1)] as const };
  }

  it('two shards split the pools: each binds only its own pools’ claims, and together every claim, with every invariant kept', async () => {
    const { m, lines, shards } = await twoShards();
    const [s0, s1] = shards;
    await m.create(namedPool('web', 2));
    await m.create(namedPool('warm', 2));
    for (let i = 0; i < 3; i++) {
      await m.create(claimOn(`web-${i}`, 'web'));
      await m.create(claimOn(`warm-${i}`, 'warm'));
    }
    await m.create({
      ...claimSet(2),
      spec: { ...claimSet(2).spec, template: { ...claimSet(2).spec.template, spec: { poolName: 'warm' } } },
    });
    await until('8 bound claims', () => bound(m).length === 8);
    await settled(m);
    expectInvariants(m);
    // Who reconciled what: pool keys by their own shard, claims by their pool's, the set by its key's.
    const reconciled = (index: number) =>
      new Set(
        lines
          .filter((x) => x.shard === index && x.l.msg === 'reconciled')
          .map((x) => `${x.l.controller}/${x.l.name}`),
      );
    const r0 = reconciled(0);
    const r1 = reconciled(1);
    expect(
      [...r0].filter((k) => k.includes('warm')),
      'shard 0 never reconciles warm or its claims',
    ).toEqual([]);
    expect(
      [...r1].filter((k) => k.includes('web')),
      'shard 1 never reconciles web or its claims',
    ).toEqual([]);
    expect(r0).toContain('podpool/web');
    expect(r0).toContain('podclaim/web-0');
    expect(r1).toContain('podpool/warm');
    expect(r1).toContain('podclaim/warm-0');
    expect(r1).toContain('podclaimset/set');
    expect(
      [...r0].some((k) => k.startsWith('podclaimset/')),
      'the set is shard 1’s',
    ).toBe(false);
    // Gauges: each shard reports its own pools only, so a sum over shards counts each pool once.
    expect(s0.metrics.registry.render()).toMatch(/pool="web"/);
    expect(s0.metrics.registry.render()).not.toMatch(/pool="warm"/);
    expect(s1.metrics.registry.render()).toMatch(/pool="warm"/);
    expect(s1.metrics.registry.render()).not.toMatch(/pool="web"/);
    // Each shard's leader series carries its shard, so an alert sees a shard nobody leads.
    expect(s0.metrics.registry.render()).toMatch(/^claimkit_leader\{shard="0"\} 1$/m);
    expect(s1.metrics.registry.render()).toMatch(/^claimkit_leader\{shard="1"\} 1$/m);
    expect(s0.metrics.registry.render()).not.toMatch(/^claimkit_leader /m);
    expect(s0.metrics.registry.render()).toMatch(/^claimkit_shards 2$/m);
    // Claims by phase likewise: web's 3 on shard 0, warm's 3 and the set's 2 on shard 1.
    expect(s0.metrics.registry.render()).toMatch(/^claimkit_podclaims\{phase="Bound"\} 3$/m);
    expect(s1.metrics.registry.render()).toMatch(/^claimkit_podclaims\{phase="Bound"\} 5$/m);
    // A pod of web deleted: the claim goes Lost and binds again, on shard 0 alone.
    const victim = m.getNow('PodClaim', { namespace: NS, name: 'web-1' });
    await m.delete('Pod', { namespace: NS, name: victim.status!.podName! });
    await until('web-1 rebinds', () => {
      const c = m.tryGetNow('PodClaim', keyOf(victim));
      return c?.status?.phase === 'Bound' && c.status?.podName !== victim.status?.podName;
    });
    await settled(m);
    expectInvariants(m);
    expect(s1.owns('PodClaim|ns1/web-1')).toBe(false);
    expect(s0.owns('PodClaim|ns1/web-1')).toBe(true);
  });

  it('a pool pinned to a shard (claimkit.dev/shard) goes there with its claims, and moves back when the pin changes', async () => {
    const { m, lines, shards } = await twoShards();
    const [s0, s1] = shards;
    // web hashes to shard 0: pinned to 1 (3 modulo 2), both pools are shard 1's.
    await m.create({
      ...namedPool('web', 2),
      metadata: { name: 'web', namespace: NS, annotations: { [ANNOTATION_SHARD]: '3' } },
    });
    await m.create(namedPool('warm', 1));
    // Until a shard's cache shows the pool, its pin is unknown there and the hash decides (two shards
    // may both act for a moment, which is safe): the claims come once both caches show it.
    await until(
      'both shards see web pinned to 1',
      () => s1.owns('PodPool|ns1/web') && !s0.owns('PodPool|ns1/web'),
    );
    for (let i = 0; i < 2; i++) await m.create(claimOn(`web-${i}`, 'web'));
    await until('2 bound claims', () => bound(m).length === 2);
    await settled(m);
    const reconciledBy = (name: string) =>
      new Set(lines.filter((x) => x.l.msg === 'reconciled' && x.l.name === name).map((x) => x.shard));
    expect(reconciledBy('web')).toEqual(new Set([1]));
    expect(reconciledBy('web-0')).toEqual(new Set([1]));
    expect(s1.owns('PodClaim|ns1/web-0')).toBe(true);
    expect(s0.owns('PodClaim|ns1/web-0')).toBe(false);
    expect(s1.metrics.registry.render()).toMatch(/^claimkit_pool_pods\{[^}]*pool="web"/m);
    expect(s0.metrics.registry.render()).not.toMatch(/pool="web"/);
    // The pin removed: web is its hash's again (shard 0), with its claims: a release and a new claim
    // are shard 0's, and every invariant holds across the move.
    await m.patch(
      'PodPool',
      { namespace: NS, name: 'web' },
      { metadata: { annotations: { [ANNOTATION_SHARD]: null } } },
    );
    await until(
      'both shards see web unpinned',
      () => s0.owns('PodPool|ns1/web') && !s1.owns('PodPool|ns1/web'),
    );
    await settled(m);
    lines.length = 0;
    await m.delete('PodClaim', { namespace: NS, name: 'web-0' });
    await m.create(claimOn('web-2', 'web'));
    await until(
      'web-0 gone, web-1 and web-2 bound',
      () => !m.tryGetNow('PodClaim', { namespace: NS, name: 'web-0' }) && bound(m).length === 2,
    );
    await settled(m);
    expectInvariants(m);
    // web-0's finalizer is shard 0's work; once the claim is gone from a cache, its key is anyone's
    // (a reconcile that finds nothing), so shard 1 may log it too.
    expect(reconciledBy('web-0')).toContain(0);
    expect(reconciledBy('web-2')).toEqual(new Set([0]));
    expect(s0.owns('PodClaim|ns1/web-1')).toBe(true);
    expect(s1.owns('PodClaim|ns1/web-1')).toBe(false);
    // The pool's gauges move with it (counters and histograms keep what each shard did).
    const gauge = /^claimkit_pool_pods\{[^}]*pool="web"/m;
    expect(s0.metrics.registry.render()).toMatch(gauge);
    expect(s1.metrics.registry.render()).not.toMatch(gauge);
  });

  it('a claim the cache does not have is any shard’s (its reconcile finds nothing); captures are shard 0’s', async () => {
    const m = model();
    const s1 = await startManager(m, {}, { shard: { index: 1, count: 2 } });
    expect(s1.owns('PodClaim|ns1/unknown')).toBe(true);
    expect(s1.owns('Capture|ns1/cap')).toBe(false);
    expect(s1.owns('PodPool|ns1/warm')).toBe(true);
    expect(s1.owns('PodPool|ns1/web')).toBe(false);
  });
});

describe('Manager logs', () => {
  it('a reconcile’s lines carry controller, namespace, name and a fresh reconcileID; a bind writes one debug line with its stages', async () => {
    const m = model();
    kubelet(m);
    const lines: Record<string, unknown>[] = [];
    await startManager(m, { log: jsonLogger('debug', (l) => lines.push(JSON.parse(l))) });
    await m.create(pool(1));
    await m.create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name: 'c1', namespace: NS },
      spec: { poolName: 'web' },
    });
    await until('c1 bound', () => bound(m).length === 1);
    const binds = await until('the bind line', () => {
      const b = lines.filter((l) => l.msg === 'bind');
      return b.length > 0 && b;
    });
    expect(binds).toHaveLength(1);
    const bind = binds[0]!;
    expect(Object.keys(bind).slice(0, 3)).toEqual(['ts', 'level', 'msg']);
    expect(bind).toMatchObject({
      level: 'debug',
      controller: 'podclaim',
      namespace: NS,
      name: 'c1',
      pod: m.getNow('PodClaim', { namespace: NS, name: 'c1' }).status?.podName,
      reconcileID: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    for (const stage of ['gatherMs', 'decideMs', 'applyMs', 'followUpMs'])
      expect(typeof bind[stage], stage).toBe('number');
    // The same turn's 'reconciled' line has the same id; every turn has its own.
    const reconciled = lines.filter((l) => l.msg === 'reconciled');
    expect(reconciled.filter((l) => l.reconcileID === bind.reconcileID)).toHaveLength(1);
    expect(new Set(reconciled.map((l) => l.reconcileID)).size).toBe(reconciled.length);
    for (const l of reconciled) {
      expect(l.controller).toMatch(/^(podclaim|podpool|podclaimset|capture)$/);
      expect(typeof l.namespace).toBe('string');
      expect(typeof l.name).toBe('string');
    }
  });
});
