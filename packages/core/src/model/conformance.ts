// API conformance cases: what claimkit relies on the API server to do. The same cases run against
// the in-memory model (core's unit tests) and a real kube-apiserver (apps/e2e), so the model cannot
// drift from the server. A case throws on a mismatch; it imports no test framework.
//
// Runner contract: give each case a client implementing core's `Client` port (and `Watcher` when
// available), a namespace that exists, and an env whose `eventually` retries until a deadline
// (the real garbage collector is asynchronous). Cases clean up the finalizers they add.
import { ApiError } from '../api/errors.ts';
import { formatSelector } from '../api/labels.ts';
import type { ObjectKey } from '../api/meta.ts';
import type { Client, WatchEvent } from '../api/ports.ts';
import type { ConfigMap, PodClaim } from '../api/types.ts';
import {
  capture,
  configMap,
  forCreate,
  forPool,
  inNamespace,
  type Mod,
  podClaim,
  podClaimSet,
  podPool,
  withFinalizers,
  withLabels,
} from '../testing/fixtures.ts';
import {
  type ConformanceCase,
  type ConformanceEnv,
  check,
  equal,
  expectCause,
  key,
  rejects,
  rvOf,
} from './conformance-assert.ts';
import { crdRuleConformanceCases } from './conformance-crd-rules.ts';

export type {
  ConformanceCase,
  ConformanceClient,
  ConformanceEnv,
} from './conformance-assert.ts';

/** An env for runners: `sleep` and `now` come from the runtime (core has no timers). */
export function conformanceEnv(opts: {
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  timeoutMs?: number;
  intervalMs?: number;
}): ConformanceEnv {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const intervalMs = opts.intervalMs ?? 100;
  return {
    async eventually(fn) {
      const deadline = opts.now() + timeoutMs;
      for (;;) {
        try {
          await fn();
          return;
        } catch (e) {
          if (opts.now() >= deadline) throw e;
          await opts.sleep(intervalMs);
        }
      }
    },
  };
}

function cm(
  ns: string,
  name: string,
  data: Record<string, string> = {},
  ...mods: Mod<ConfigMap>[]
): ConfigMap {
  return forCreate(configMap(name, data, inNamespace(ns), ...mods));
}

function claim(ns: string, name: string, ...mods: Mod<PodClaim>[]): PodClaim {
  return forCreate(podClaim(name, inNamespace(ns), forPool('web'), ...mods));
}

const TEST_FINALIZER = 'conformance.claimkit.dev/hold';

async function removeFinalizers(client: Client, kind: 'ConfigMap' | 'PodClaim', k: ObjectKey): Promise<void> {
  try {
    await client.patch(kind, k, { metadata: { finalizers: null } });
  } catch (e) {
    if (!(e instanceof ApiError && e.reason === 'NotFound')) throw e;
  }
}

// ---------------- cases ----------------

export const conformanceCases: ConformanceCase[] = [
  {
    name: 'resourceVersion changes on every write; a stale update is a Conflict',
    async run(c, ns) {
      const a = await c.create(cm(ns, 'rv-a', { v: '1' }));
      const b = await c.update({ ...a, data: { v: '2' } });
      check(rvOf(b) !== rvOf(a), 'update did not change resourceVersion');
      const p = await c.patch('ConfigMap', key(ns, 'rv-a'), { data: { v: '3' } });
      check(rvOf(p) !== rvOf(b), 'patch did not change resourceVersion');
      await rejects(
        c.update({ ...a, data: { v: 'stale' } }),
        ['Conflict'],
        'update with a stale resourceVersion',
      );
      equal((await c.get('ConfigMap', key(ns, 'rv-a'))).data, { v: '3' }, 'data after the rejected update');
    },
  },
  {
    name: 'a no-op write keeps resourceVersion',
    async run(c, ns) {
      const a = await c.create(cm(ns, 'noop', { v: '1' }));
      const b = await c.update(a);
      equal(rvOf(b), rvOf(a), 'resourceVersion after a no-op update');
      const p = await c.patch('ConfigMap', key(ns, 'noop'), { data: { v: '1' } });
      equal(rvOf(p), rvOf(a), 'resourceVersion after a no-op patch');
    },
  },
  {
    name: 'generation changes on spec writes only',
    async run(c, ns) {
      const a = await c.create(claim(ns, 'gen'));
      equal(a.metadata.generation, 1, 'generation after create');
      const labelled = await c.patch('PodClaim', key(ns, 'gen'), { metadata: { labels: { x: 'y' } } });
      equal(labelled.metadata.generation, 1, 'generation after a label patch');
      check(rvOf(labelled) !== rvOf(a), 'label patch did not change resourceVersion');
      const st = await c.updateStatus({ ...labelled, status: { phase: 'Pending' } });
      equal(st.metadata.generation, 1, 'generation after a status write');
      const sp = await c.update({ ...st, spec: { ...st.spec, lostPolicy: 'Fail' } });
      equal(sp.metadata.generation, 2, 'generation after a spec update');
      const pp = await c.patch('PodClaim', key(ns, 'gen'), { spec: { lostPolicy: 'Rebind' } });
      equal(pp.metadata.generation, 3, 'generation after a spec patch');
    },
  },
  {
    name: 'status subresource: create and update ignore status, status writes ignore spec and metadata',
    async run(c, ns) {
      const input = claim(ns, 'sub');
      input.status = { phase: 'Bound' };
      const a = await c.create(input);
      equal(a.status?.phase, undefined, 'status.phase after create');
      const u = await c.update({ ...a, spec: { ...a.spec, lostPolicy: 'Fail' }, status: { phase: 'Lost' } });
      equal(u.status?.phase, undefined, 'status.phase after an update');
      equal(u.spec.lostPolicy, 'Fail', 'spec.lostPolicy after an update');
      const s = await c.updateStatus({
        ...u,
        metadata: { ...u.metadata, labels: { sneaky: 'yes' } },
        spec: { ...u.spec, lostPolicy: 'Rebind' },
        status: { phase: 'Bound', migrations: 0, podName: 'p1' },
      });
      equal(s.status?.phase, 'Bound', 'status.phase after updateStatus');
      equal(s.status?.podName, 'p1', 'status.podName after updateStatus');
      equal(s.spec.lostPolicy, 'Fail', 'spec.lostPolicy after updateStatus');
      equal(s.metadata.labels?.sneaky, undefined, 'labels after updateStatus');
      const ps = await c.patchStatus('PodClaim', key(ns, 'sub'), {
        spec: { lostPolicy: 'Rebind' },
        status: { phase: 'Lost', podName: null },
      });
      equal(ps.status?.phase, 'Lost', 'status.phase after patchStatus');
      equal(ps.status?.migrations, 0, 'status.migrations kept by the merge patch');
      equal(ps.status?.podName, undefined, 'status.podName removed by the merge patch');
      equal(ps.spec.lostPolicy, 'Fail', 'spec.lostPolicy after patchStatus');
      const ms = await c.patch('PodClaim', key(ns, 'sub'), { status: { phase: 'Pending' } });
      equal(ms.status?.phase, 'Lost', 'status.phase after a main-resource patch');
    },
  },
  {
    name: 'finalizers: delete sets deletionTimestamp, the last finalizer removal deletes',
    async run(c, ns) {
      const k = key(ns, 'fin');
      try {
        await c.create(cm(ns, 'fin', {}, withFinalizers(TEST_FINALIZER, `${TEST_FINALIZER}-2`)));
        const kept = await c.delete('ConfigMap', k);
        if (kept !== undefined)
          check(kept.metadata.deletionTimestamp, 'delete returned an object without deletionTimestamp');
        const got = await c.get('ConfigMap', k);
        check(got.metadata.deletionTimestamp, 'no deletionTimestamp after delete with finalizers');
        const again = await c.delete('ConfigMap', k);
        if (again !== undefined)
          equal(again.metadata.deletionTimestamp, got.metadata.deletionTimestamp, 'deletionTimestamp');
        const one = await c.patch('ConfigMap', k, { metadata: { finalizers: [TEST_FINALIZER] } });
        equal(one.metadata.finalizers, [TEST_FINALIZER], 'finalizers after removing one');
        await c.get('ConfigMap', k);
        await c.patch('ConfigMap', k, { metadata: { finalizers: null } });
        await rejects(c.get('ConfigMap', k), ['NotFound'], 'get after the last finalizer was removed');
      } finally {
        await removeFinalizers(c, 'ConfigMap', k);
      }
    },
  },
  {
    name: 'no new finalizers on a deleting object',
    async run(c, ns) {
      const k = key(ns, 'fin-new');
      try {
        await c.create(cm(ns, 'fin-new', {}, withFinalizers(TEST_FINALIZER)));
        await c.delete('ConfigMap', k);
        const e = await rejects(
          c.patch('ConfigMap', k, { metadata: { finalizers: [TEST_FINALIZER, `${TEST_FINALIZER}-new`] } }),
          ['Invalid', 'Forbidden'],
          'adding a finalizer to a deleting object',
        );
        expectCause(e, 'metadata.finalizers');
        equal(
          (await c.get('ConfigMap', k)).metadata.finalizers,
          [TEST_FINALIZER],
          'finalizers after the rejection',
        );
      } finally {
        await removeFinalizers(c, 'ConfigMap', k);
      }
    },
  },
  {
    name: 'delete preconditions on uid and resourceVersion',
    async run(c, ns) {
      const k = key(ns, 'pre');
      const a = await c.create(cm(ns, 'pre', { v: '1' }));
      const b = await c.patch('ConfigMap', k, { data: { v: '2' } });
      await rejects(
        c.delete('ConfigMap', k, { preconditions: { uid: '00000000-0000-4000-8000-000000000000' } }),
        ['Conflict'],
        'delete with another uid',
      );
      await rejects(
        c.delete('ConfigMap', k, { preconditions: { resourceVersion: rvOf(a) } }),
        ['Conflict'],
        'delete with a stale resourceVersion',
      );
      await c.get('ConfigMap', k);
      await c.delete('ConfigMap', k, {
        preconditions: { uid: b.metadata.uid!, resourceVersion: rvOf(b) },
      });
      await rejects(c.get('ConfigMap', k), ['NotFound'], 'get after a delete with matching preconditions');
    },
  },
  {
    name: 'merge patch with resourceVersion and uid preconditions',
    async run(c, ns) {
      const k = key(ns, 'patch-pre');
      const a = await c.create(cm(ns, 'patch-pre', { v: '1', keep: 'k' }));
      const b = await c.patch('ConfigMap', k, { data: { v: '2' } }, { resourceVersion: rvOf(a) });
      equal(b.data, { v: '2', keep: 'k' }, 'data after a merge patch');
      await rejects(
        c.patch('ConfigMap', k, { data: { v: 'stale' } }, { resourceVersion: rvOf(a) }),
        ['Conflict'],
        'patch with a stale resourceVersion option',
      );
      await rejects(
        c.patch('ConfigMap', k, { metadata: { resourceVersion: rvOf(a) }, data: { v: 'stale' } }),
        ['Conflict'],
        'patch with a stale metadata.resourceVersion in the body',
      );
      await rejects(
        // The API server itself answers 422 (metadata.uid is immutable); the port promises Conflict
        // and the client-node adapter maps it, so both implementations agree here.
        c.patch('ConfigMap', k, { data: { v: 'other' } }, { uid: '00000000-0000-4000-8000-000000000000' }),
        ['Conflict'],
        'patch with another uid',
      );
      const d = await c.patch(
        'ConfigMap',
        k,
        { data: { keep: null } },
        { resourceVersion: rvOf(b), uid: b.metadata.uid! },
      );
      equal(d.data, { v: '2' }, 'data after a null in a merge patch');
    },
  },
  {
    name: 'update needs a resourceVersion on custom resources',
    async run(c, ns) {
      const a = await c.create(claim(ns, 'norv'));
      const { resourceVersion: _rv, ...metadata } = a.metadata;
      await rejects(c.update({ ...a, metadata }), ['Invalid', 'Conflict'], 'update without resourceVersion');
    },
  },
  {
    name: 'label and field selectors',
    async run(c, ns) {
      await c.create(cm(ns, 'sel-a', {}, withLabels({ app: 'x', tier: 'a' })));
      await c.create(cm(ns, 'sel-b', {}, withLabels({ app: 'x', tier: 'b' })));
      await c.create(cm(ns, 'sel-c', {}, withLabels({ app: 'y' })));
      const names = async (opts: Parameters<Client['list']>[1]): Promise<string[]> =>
        (await c.list('ConfigMap', { namespace: ns, ...opts })).items
          .map((o) => o.metadata.name)
          .filter((n) => n.startsWith('sel-'))
          .sort();
      equal(await names({ labelSelector: 'app=x' }), ['sel-a', 'sel-b'], 'app=x');
      equal(
        await names({ labelSelector: { matchLabels: { app: 'x', tier: 'b' } } }),
        ['sel-b'],
        'matchLabels',
      );
      equal(await names({ labelSelector: 'app in (x,y),tier!=a' }), ['sel-b', 'sel-c'], 'set-based');
      equal(await names({ labelSelector: '!tier' }), ['sel-c'], '!tier');
      equal(
        await names({
          labelSelector: formatSelector({ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }),
        }),
        ['sel-a', 'sel-b'],
        'tier exists',
      );
      equal(await names({ fieldSelector: { 'metadata.name': 'sel-c' } }), ['sel-c'], 'metadata.name');
      equal(
        await names({ labelSelector: 'app=x', fieldSelector: { 'metadata.name': 'sel-c' } }),
        [],
        'label and field selector together',
      );
      const list = await c.list('ConfigMap', { namespace: ns });
      check(list.resourceVersion !== '', 'list has no resourceVersion');
    },
  },
  {
    name: 'paged lists: limit and continue return every item once',
    async run(c, ns) {
      for (const n of ['page-a', 'page-b', 'page-c'])
        await c.create(cm(ns, n, {}, withLabels({ paged: 'yes' })));
      const seen: string[] = [];
      let page = await c.list('ConfigMap', { namespace: ns, labelSelector: 'paged=yes', limit: 2 });
      check(page.items.length === 2, `first page has ${page.items.length} items, want 2`);
      check(Boolean(page.continue), 'first page has no continue token');
      seen.push(...page.items.map((o) => o.metadata.name));
      page = await c.list('ConfigMap', {
        namespace: ns,
        labelSelector: 'paged=yes',
        limit: 2,
        continue: page.continue!,
      });
      seen.push(...page.items.map((o) => o.metadata.name));
      check(!page.continue, 'last page still has a continue token');
      equal(seen.sort(), ['page-a', 'page-b', 'page-c'], 'pages');
    },
  },
  {
    name: 'AlreadyExists and NotFound',
    async run(c, ns) {
      await c.create(cm(ns, 'dup'));
      await rejects(c.create(cm(ns, 'dup')), ['AlreadyExists'], 'duplicate create');
      const k = key(ns, 'missing');
      await rejects(c.get('ConfigMap', k), ['NotFound'], 'get missing');
      await rejects(c.patch('ConfigMap', k, { data: { a: 'b' } }), ['NotFound'], 'patch missing');
      await rejects(c.delete('ConfigMap', k), ['NotFound'], 'delete missing');
      await rejects(
        c.patchStatus('PodClaim', k, { status: { phase: 'Bound' } }),
        ['NotFound'],
        'patchStatus missing',
      );
    },
  },
  {
    name: 'generateName appends random characters',
    async run(c, ns) {
      const input = cm(ns, '');
      input.metadata.generateName = 'gen-';
      const a = await c.create(input);
      check(/^gen-[a-z0-9]{5}$/.test(a.metadata.name), `generated name ${a.metadata.name}`);
    },
  },
  {
    name: 'CRD defaults are applied on create',
    async run(c, ns) {
      const input = forCreate(capture('defaults', inNamespace(ns)));
      const spec = input.spec as unknown as Record<string, unknown>;
      delete spec.leaseSeconds;
      delete spec.timeoutSeconds;
      delete spec.maxAttempts;
      delete spec.backend;
      const a = await c.create(input);
      equal(
        [a.spec.leaseSeconds, a.spec.timeoutSeconds, a.spec.maxAttempts, a.spec.backend],
        [3000, 1800, 3, { type: 'External' }],
        'Capture defaults',
      );
      const poolIn = forCreate(podPool('defaults', inNamespace(ns)));
      const ps = poolIn.spec as unknown as Record<string, unknown>;
      delete ps.minIdle;
      delete ps.maxPods;
      delete ps.releasePolicy;
      delete ps.drainSeconds;
      const pool = await c.create(poolIn);
      equal(
        [pool.spec.minIdle, pool.spec.maxPods, pool.spec.releasePolicy, pool.spec.drainSeconds],
        [2, 50, 'Recycle', 0],
        'PodPool defaults',
      );
      const setIn = forCreate(podClaimSet('defaults', inNamespace(ns)));
      delete (setIn.spec as unknown as Record<string, unknown>).replicas;
      equal((await c.create(setIn)).spec.replicas, 1, 'PodClaimSet replicas default');
      // Unknown fields are pruned.
      const withJunk = claim(ns, 'pruned');
      (withJunk.spec as unknown as Record<string, unknown>).junk = 'x';
      const pr = await c.create(withJunk);
      equal(
        (pr.spec as unknown as Record<string, unknown>).junk,
        undefined,
        'unknown spec field after create',
      );
    },
  },
  {
    name: 'schema rejections name every field',
    async run(c, ns) {
      const bad = forCreate(capture('bad', inNamespace(ns)));
      bad.spec.leaseSeconds = -1;
      (bad.spec.backend as { type: string }).type = 'Bogus';
      delete (bad.spec as unknown as Record<string, unknown>).selector;
      const e = await rejects(c.create(bad), ['Invalid'], 'create an invalid Capture');
      expectCause(e, 'spec.leaseSeconds', 'greater than or equal to 1');
      expectCause(e, 'spec.backend.type', 'Unsupported value');
      expectCause(e, 'spec.selector', 'Required');
      const typeErr = forCreate(capture('bad-type', inNamespace(ns)));
      (typeErr.spec as unknown as Record<string, unknown>).maxAttempts = 'three';
      expectCause(
        await rejects(c.create(typeErr), ['Invalid'], 'string for an integer'),
        'spec.maxAttempts',
        'integer',
      );
      const same = claim(ns, 'same-pod');
      same.spec.podName = 'p1';
      same.spec.sourcePod = 'p1';
      expectCause(
        await rejects(c.create(same), ['Invalid'], 'sourcePod == podName'),
        'spec.sourcePod',
        'differ',
      );
      const a = await c.create(claim(ns, 'immutable'));
      const e2 = await rejects(
        c.update({ ...a, spec: { ...a.spec, poolName: 'other' } }),
        ['Invalid'],
        'changing poolName',
      );
      expectCause(e2, 'spec.poolName', 'immutable');
      await rejects(
        c.patch('PodClaim', key(ns, 'immutable'), { spec: { poolName: 'other' } }),
        ['Invalid'],
        'patching poolName',
      );
      const e3 = await rejects(
        c.patchStatus('PodClaim', key(ns, 'immutable'), { status: { phase: 'Bogus' } }),
        ['Invalid'],
        'an invalid status phase',
      );
      expectCause(e3, 'status.phase', 'Unsupported value');
      equal(
        (await c.get('PodClaim', key(ns, 'immutable'))).spec.poolName,
        'web',
        'poolName after the rejections',
      );
    },
  },
  {
    name: 'ownerReference garbage collection',
    async run(c, ns, env) {
      const owner = await c.create(cm(ns, 'gc-owner'));
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-owner', uid: owner.metadata.uid! };
      const dep = cm(ns, 'gc-dep');
      dep.metadata.ownerReferences = [ref];
      await c.create(dep);
      const other = await c.create(cm(ns, 'gc-other-owner'));
      const both = cm(ns, 'gc-two-owners');
      both.metadata.ownerReferences = [
        ref,
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-other-owner', uid: other.metadata.uid! },
      ];
      await c.create(both);
      await c.delete('ConfigMap', key(ns, 'gc-owner'));
      await env.eventually(async () => {
        await rejects(
          c.get('ConfigMap', key(ns, 'gc-dep')),
          ['NotFound'],
          'dependent after its owner was deleted',
        );
      });
      // A dependent with another live owner is kept (the GC only drops the dangling reference).
      await c.get('ConfigMap', key(ns, 'gc-two-owners'));
    },
  },
  {
    name: 'watch from a resourceVersion streams ADDED, MODIFIED, DELETED in order',
    async run(c, ns, env) {
      if (!c.watch) return;
      const start = await c.list('ConfigMap', { namespace: ns });
      const seen: WatchEvent<ConfigMap>[] = [];
      const stop = c.watch(
        'ConfigMap',
        { namespace: ns, labelSelector: 'watch=yes', resourceVersion: start.resourceVersion },
        { onEvent: (e) => seen.push(e) },
      );
      try {
        await c.create(cm(ns, 'w-1', { v: '1' }, withLabels({ watch: 'yes' })));
        await c.create(cm(ns, 'w-other', { v: '1' }));
        await c.patch('ConfigMap', key(ns, 'w-1'), { data: { v: '2' } });
        await c.delete('ConfigMap', key(ns, 'w-1'));
        await env.eventually(() => {
          equal(
            seen.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.data?.v}`),
            ['ADDED w-1 1', 'MODIFIED w-1 2', 'DELETED w-1 2'],
            'watch events',
          );
        });
      } finally {
        stop();
      }
    },
  },
  {
    name: 'watch without a resourceVersion starts with ADDED for what exists, then streams changes',
    async run(c, ns, env) {
      if (!c.watch) return;
      await c.create(cm(ns, 'wa-1', { v: '1' }, withLabels({ wa: 'yes' })));
      await c.create(cm(ns, 'wa-2', { v: '1' }, withLabels({ wa: 'yes' })));
      const seen: string[] = [];
      const stop = c.watch(
        'ConfigMap',
        { namespace: ns, labelSelector: 'wa=yes' },
        { onEvent: (e) => seen.push(`${e.type} ${e.object.metadata.name} ${e.object.data?.v}`) },
      );
      try {
        await env.eventually(() =>
          equal([...seen].sort(), ['ADDED wa-1 1', 'ADDED wa-2 1'], 'initial events'),
        );
        await c.patch('ConfigMap', key(ns, 'wa-2'), { data: { v: '2' } });
        await env.eventually(() => equal(seen.slice(2), ['MODIFIED wa-2 2'], 'the change after them'));
      } finally {
        stop();
      }
    },
  },
  ...crdRuleConformanceCases,
];
