import { describe, expect, test } from 'vitest';
import { parseReconcileKey, reconcileKey } from './reconcile-key.ts';

describe('reconcile keys', () => {
  test('round-trip, names with slashes in them kept whole', () => {
    expect(parseReconcileKey(reconcileKey('PodClaim', 'ns', 'a'))).toEqual({
      kind: 'PodClaim',
      namespace: 'ns',
      name: 'a',
    });
    expect(parseReconcileKey(reconcileKey('Capture', '', 'x/y'))).toEqual({
      kind: 'Capture',
      namespace: '',
      name: 'x/y',
    });
  });

  test('anything else is a clear error', () => {
    expect(() => parseReconcileKey('ns/a')).toThrow(/not a reconcile key/);
    expect(() => parseReconcileKey('Pod|ns/a')).toThrow(/not a reconcile key/);
    expect(() => parseReconcileKey('PodClaim|a')).toThrow(/not a reconcile key/);
  });
});
