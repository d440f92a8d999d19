import { describe, expect, it } from 'vitest';
import type { PodClaim } from '../api/types.ts';
import { deleting, inNamespace, type Mod, podClaim, withSpec, withUid } from '../testing/fixtures.ts';
import { MemoryPodClaimIndex } from './claim-index.ts';

/** A claim in namespace ns with a readable uid, as the index's answers name it. */
const claim = (name: string, spec: Partial<PodClaim['spec']>, ...mods: Mod<PodClaim>[]) =>
  podClaim(name, inNamespace('ns'), withUid(`uid-${name}`), withSpec(spec), ...mods);

describe('MemoryPodClaimIndex (core’s ClaimIndex over watched JSON)', () => {
  it('answers the holding view: a deleting claim is kept but holds nothing', () => {
    const index = new MemoryPodClaimIndex();
    index.upsert(claim('a', { podName: 'p1', sourcePod: 'p0' }));
    index.upsert(claim('going', { podName: 'p2' }, deleting()));
    expect(index.size).toBe(2);
    expect(index.claimsReferencing('ns', 'p1')).toEqual([
      { namespace: 'ns', name: 'a', uid: 'uid-a', podName: 'p1', sourcePod: 'p0' },
    ]);
    expect(index.claimsReferencing('ns', 'p0').map((r) => r.name)).toEqual(['a']);
    expect(index.claimsReferencing('ns', 'p2')).toEqual([]);
    expect(index.claimsReferencing('other', 'p1')).toEqual([]);
  });

  it('a claim naming one pod in both fields is listed once; updates and deletes move references', () => {
    const index = new MemoryPodClaimIndex();
    index.upsert(claim('dup', { podName: 'p5', sourcePod: 'p5' }));
    expect(index.claimsReferencing('ns', 'p5').map((r) => r.name)).toEqual(['dup']);
    index.upsert(claim('dup', { podName: 'p6' }));
    expect(index.claimsReferencing('ns', 'p5')).toEqual([]);
    index.remove(claim('dup', {}));
    expect(index.claimsReferencing('ns', 'p6')).toEqual([]);
    expect(index.size).toBe(0);
  });

  it('skips garbage without throwing; a relist replaces everything and marks the index synced', () => {
    const index = new MemoryPodClaimIndex();
    for (const junk of [null, 7, 'x', {}, { metadata: { name: '' } }, { metadata: { name: 3 } }])
      index.upsert(junk);
    index.upsert({ metadata: { name: 'odd', namespace: 'ns' }, spec: { podName: 42, sourcePod: 'p7' } });
    expect(index.size).toBe(1);
    expect(index.claimsReferencing('ns', 'p7').map((r) => r.name)).toEqual(['odd']);
    expect(index.synced()).toBe(false);
    index.replace([claim('b', { podName: 'p1' }), null]);
    expect(index.synced()).toBe(true);
    expect(index.size).toBe(1);
    expect(index.claimsReferencing('ns', 'p7')).toEqual([]);
  });
});
