import { describe, expect, test } from 'vitest';
import { orderViolations } from './capacity.ts';

describe('orderViolations (claims of a pool bound out of creation order)', () => {
  const twoPools = (i: number) => i % 2;

  test('claims bound in creation order within each pool: none', () => {
    // Pool 0: claims 0, 2; pool 1: claims 1, 3. Across pools the order does not matter.
    const r = orderViolations(
      [{ boundAt: 100 }, { boundAt: 50 }, { boundAt: 200 }, { boundAt: 60 }],
      twoPools,
    );
    expect(r).toEqual({ violations: 0, worstMs: 0, toleranceMs: 1000 });
  });

  test('a newer claim bound before an older one of its pool, by more than the tolerance', () => {
    const r = orderViolations(
      [{ boundAt: 5000 }, { boundAt: 0 }, { boundAt: 1500 }, { boundAt: 10 }, { boundAt: 4500 }],
      twoPools,
    );
    // Claim 2 was bound 3,500 ms before claim 0; claim 4, 500 ms before it (within the tolerance).
    expect(r.violations).toBe(1);
    expect(r.worstMs).toBe(3500);
  });

  test('an unbound claim is skipped, and the tolerance is the caller’s', () => {
    const r = orderViolations([{ boundAt: 300 }, {}, { boundAt: 100 }], () => 0, 100);
    expect(r.violations).toBe(1);
    expect(r.worstMs).toBe(200);
  });
});
