import type { Capture, Pod, PodClaim } from '@claimkit/core';
import { describe, expect, it } from 'vitest';
import { keysForClaim, keysForPod, PodReferenceIndex } from './routing.ts';

const pod = (name: string, labels: Record<string, string> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', labels },
  spec: { containers: [] },
});
const claim = (name: string, spec: Partial<PodClaim['spec']>): PodClaim => ({
  apiVersion: 'claimkit.dev/v1alpha1',
  kind: 'PodClaim',
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
  spec: { poolName: 'web', ...spec },
});

describe('routing', () => {
  it('P6: an unlabelled pod reaches the claims referencing it by podName and sourcePod', () => {
    const refs = new PodReferenceIndex();
    refs.update(claim('a', { podName: 'p1', sourcePod: 'p0' }), undefined);
    refs.update(claim('b', { podName: 'p2' }), undefined);
    const view = { captures: () => [], claims: () => [], refs };
    expect(keysForPod(view, pod('p1'), undefined)).toEqual(['PodClaim|ns/a']);
    expect(keysForPod(view, pod('p0'), undefined)).toEqual(['PodClaim|ns/a']);
    // The old object's label still routes (a label removed in this very update).
    const old = pod('p9', { 'claimkit.dev/claimed-by': 'c', 'claimkit.dev/pool': 'web' });
    expect(keysForPod(view, pod('p9'), old).sort()).toEqual(['PodClaim|ns/c', 'PodPool|ns/web']);
    // Index updates: a claim moving off a pod no longer gets its events.
    refs.update(claim('a', { podName: 'p3' }), claim('a', { podName: 'p1', sourcePod: 'p0' }));
    expect(keysForPod(view, pod('p1'), undefined)).toEqual([]);
    expect(keysForPod(view, pod('p3'), undefined)).toEqual(['PodClaim|ns/a']);
    refs.update(undefined, claim('a', { podName: 'p3' }));
    expect(keysForPod(view, pod('p3'), undefined)).toEqual([]);
  });

  it('captures get candidate pods and their holder; pending claims get new Idle pods', () => {
    const cap = {
      kind: 'Capture',
      metadata: { name: 'snap', namespace: 'ns' },
      spec: { selector: { matchLabels: { app: 'db' } } },
      status: { claim: { holder: { name: 'holder', uid: 'u' } } },
    } as unknown as Capture;
    const view = {
      captures: () => [cap],
      claims: () => [claim('waiting', {}), claim('done', { podName: 'x' })],
      refs: new PodReferenceIndex(),
    };
    expect(keysForPod(view, pod('db-1', { app: 'db' }), undefined)).toEqual(['Capture|ns/snap']);
    expect(keysForPod(view, pod('holder'), undefined)).toEqual(['Capture|ns/snap']);
    expect(
      keysForPod(
        view,
        pod('w1', { 'claimkit.dev/pool': 'web', 'claimkit.dev/state': 'Idle' }),
        undefined,
      ).sort(),
    ).toEqual(['PodClaim|ns/waiting', 'PodPool|ns/web']);
  });

  it('claims route to themselves, their pool and their claim set', () => {
    const c = claim('a', {});
    c.metadata.ownerReferences = [
      { apiVersion: 'claimkit.dev/v1alpha1', kind: 'PodClaimSet', name: 'set', uid: 'u' },
    ];
    expect(keysForClaim(c, undefined).sort()).toEqual([
      'PodClaimSet|ns/set',
      'PodClaim|ns/a',
      'PodPool|ns/web',
    ]);
  });
});
