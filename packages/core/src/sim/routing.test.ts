// The simulator routes every watched change through the mapEvent it is given (core's, the
// controller's own, by default), with the old and the new object, after the reference index saw it.
import { describe, expect, test } from 'vitest';
import type { PodClaim } from '../api/types.ts';
import { type MapEvent, mapEvent, type WatchedKind } from '../loop/map-event.ts';
import { simulate } from './simulator.ts';

describe('simulator event routing', () => {
  test('every change reaches mapEvent with its old and new object; the index is current', async () => {
    const seen = new Map<string, number>();
    const count = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1);
    let staleIndex = 0;
    let indexChecks = 0;
    const spy: MapEvent = (kind, old, cur, view) => {
      count(`${kind}:${old ? 'old' : '-'}/${cur ? 'new' : '-'}`);
      if (old && cur) {
        expect(old.metadata.name).toBe(cur.metadata.name);
        expect(old.metadata.resourceVersion).not.toBe(cur.metadata.resourceVersion);
      }
      // A claim's change is in the reference index before it is routed (as in the controller).
      const claim = kind === 'PodClaim' ? (cur as PodClaim | undefined) : undefined;
      if (claim?.status?.podName) {
        indexChecks++;
        const refs = view.references.referencingIncludingDeleting(
          claim.metadata.namespace ?? '',
          claim.status?.podName,
        );
        if (!refs.some((r) => r.claim === claim)) staleIndex++;
      }
      return mapEvent(kind, old, cur, view);
    };
    const r = await simulate({ seed: 7, steps: 1500, mapEvent: spy });
    expect(r.violations).toEqual([]);
    expect(indexChecks).toBeGreaterThan(100);
    expect(staleIndex).toBe(0);
    const kinds: WatchedKind[] = ['Pod', 'PodClaim', 'Capture'];
    for (const kind of kinds) {
      // Additions (no old object), updates (both) and deletions (old object only) all happen.
      expect(seen.get(`${kind}:-/new`), kind).toBeGreaterThan(0);
      expect(seen.get(`${kind}:old/new`), kind).toBeGreaterThan(0);
      expect(seen.get(`${kind}:old/-`), kind).toBeGreaterThan(0);
    }
    expect(seen.get('PodPool:old/new')).toBeGreaterThan(0);
    expect(seen.get('PodClaimSet:old/new')).toBeGreaterThan(0);
    expect([...seen.keys()].some((k) => k.endsWith(':-/-'))).toBe(false);
  });
});
