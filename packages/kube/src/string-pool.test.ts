// The pool the informers pass stored objects through: which strings it takes, that it changes no
// value a reader sees, that it starts over at its capacity, and that the cache's informers share one.
import { type KubeObject, LABEL_POOL, type Pod } from '@claimkit/core';
import { ApiModel } from '@claimkit/core/model';
import {
  boundTo,
  FakeTimers,
  forCreate,
  inNamespace,
  inPool,
  pod,
  podClaim,
  withAnnotations,
  withState,
} from '@claimkit/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InformerCache } from './informer-cache.ts';
import { MAX_POOLED_LENGTH, StringPool } from './string-pool.ts';

const NS = 'team-a';

/** A pod as the API server sends it: status, conditions, an owner, a finalizer. */
function servedPod(name: string): Pod {
  const p = pod(
    name,
    inNamespace(NS),
    inPool('warm'),
    withState('Idle'),
    withAnnotations({ note: 'n'.repeat(200) }),
  );
  return {
    ...p,
    metadata: {
      ...p.metadata,
      uid: `uid-${name}`,
      resourceVersion: `rv-${name}`,
      creationTimestamp: '2026-12-06T09:00:00Z',
      finalizers: ['claimkit.dev/release'],
      ownerReferences: [
        { apiVersion: 'claimkit.dev/v1alpha1', kind: 'PodPool', name: 'warm', uid: 'pool-uid' },
      ],
    },
    spec: {
      ...p.spec,
      nodeName: 'node-1',
      containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
    },
    status: {
      phase: 'Running',
      hostIP: '10.0.0.1',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-06T09:00:01Z' }],
    },
  } as Pod;
}

const running: InformerCache[] = [];
afterEach(() => {
  for (const c of running.splice(0)) c.stop();
});

describe('StringPool', () => {
  it("takes an object's repeated strings, not its name, uid or resourceVersion, and changes no value", () => {
    const strings = new StringPool();
    const p = servedPod('p-1');
    const before = structuredClone(p);
    strings.internObject(p as KubeObject);
    expect(p).toEqual(before);
    for (const s of [
      'v1',
      'Pod',
      NS,
      '2026-12-06T09:00:00Z',
      'warm',
      'Idle',
      'claimkit.dev/release',
      'claimkit.dev/v1alpha1',
      'PodPool',
      'pool-uid',
      'node-1',
      'main',
      'registry.k8s.io/pause:3.10',
      'Running',
      '10.0.0.1',
      'Ready',
      'True',
      '2026-12-06T09:00:01Z',
    ])
      expect(strings.has(s), s).toBe(true);
    for (const s of ['p-1', 'uid-p-1', 'rv-p-1', 'n'.repeat(200)]) expect(strings.has(s), s).toBe(false);
    // A second pod adds only what differs.
    const size = strings.size;
    strings.internObject(servedPod('p-2') as KubeObject);
    expect(strings.size).toBe(size);
  });

  it('leaves long strings and frozen parts as they are, and starts over at its capacity', () => {
    const strings = new StringPool(3);
    const long = 'x'.repeat(MAX_POOLED_LENGTH + 1);
    expect(strings.intern(long)).toBe(long);
    expect(strings.has(long)).toBe(false);
    const frozen = Object.freeze({
      ...servedPod('p'),
      metadata: Object.freeze({ ...servedPod('p').metadata }),
    });
    expect(() => strings.internObject(frozen as KubeObject)).not.toThrow();
    expect(strings.has(NS)).toBe(false);
    const small = new StringPool(3);
    for (const s of ['a', 'b', 'c']) small.intern(s);
    expect(small.size).toBe(3);
    small.intern('d');
    expect(small.size).toBe(1);
    expect(small.has('a')).toBe(false);
    expect(small.has('d')).toBe(true);
  });

  it("an InformerCache's informers share one pool, and what they list equals what the API server holds", async () => {
    const m = new ApiModel();
    const strings = new StringPool();
    const cache = new InformerCache(m, { timers: new FakeTimers(), strings });
    running.push(cache);
    cache.informerFor('Pod', { indexLabels: [LABEL_POOL] });
    cache.informerFor('PodClaim');
    await cache.start();
    await m.create(forCreate(pod('p-1', inNamespace(NS), inPool('warm'), withState('Idle'))));
    await m.create(forCreate(podClaim('c-1', inNamespace('team-b'), boundTo('p-1', 'node-1'))));
    const pods = (await cache.list('Pod', { namespace: NS })).items;
    const claims = (await cache.list('PodClaim', { namespace: 'team-b' })).items;
    expect(pods).toEqual(m.listNow('Pod', { namespace: NS }));
    expect(claims).toEqual(m.listNow('PodClaim', { namespace: 'team-b' }));
    expect(strings.has(NS)).toBe(true);
    expect(strings.has('team-b')).toBe(true);
    expect(strings.has('PodClaim')).toBe(true);
  });
});
