// Properties over generated inputs (fast-check) for the rules that are pure functions of data.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { applyMergePatch, clone, deepEqual } from './api/json.ts';
import { formatSelector, matchesSelector, parseSelector } from './api/labels.ts';
import type { Capture, PodClaim } from './api/types.ts';
import { byCreationThenName, sortByCreationThenName } from './capture/candidates.ts';
import { ClaimSuperseded, completeClaim, decideAcquire } from './capture/claim.ts';
import { claimNameFor, nextClaimNames } from './claimset/claim-names.ts';
import { chooseScaleIn, isMigrating } from './claimset/scale-in.ts';
import { capture, heldBy, pod, podClaim, T0_MS } from './testing/fixtures.ts';

const labelKey = fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/);
const labelValue = fc.stringMatching(/^[a-z0-9]{1,5}$/);
const labels = fc.dictionary(labelKey, labelValue, { maxKeys: 4 });

describe('label selectors', () => {
  test('formatting then parsing keeps the meaning', () => {
    const selector = fc.record({
      matchLabels: fc.dictionary(labelKey, labelValue, { maxKeys: 3 }),
      matchExpressions: fc.array(
        fc.oneof(
          fc.record({
            key: labelKey,
            operator: fc.constantFrom('In' as const, 'NotIn' as const),
            values: fc.array(labelValue, { minLength: 1, maxLength: 3 }),
          }),
          fc.record({ key: labelKey, operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const) }),
        ),
        { maxLength: 3 },
      ),
    });
    fc.assert(
      fc.property(selector, labels, (sel, l) => {
        const reparsed = parseSelector(formatSelector(sel));
        expect(matchesSelector(l, reparsed)).toBe(matchesSelector(l, sel));
      }),
    );
  });
});

describe('JSON helpers', () => {
  test('a __proto__ key is data, not a prototype (found by the property below)', () => {
    const v = JSON.parse('{"a":{"__proto__":{"x":1}}}') as { a: Record<string, unknown> };
    const c = clone(v);
    expect(Object.keys(c.a)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(c.a)).toBe(Object.prototype);
    expect(deepEqual(c, v)).toBe(true);
    const patched = applyMergePatch({}, v) as { a: Record<string, unknown> };
    expect(Object.keys(patched.a)).toEqual(['__proto__']);
    expect(({} as { x?: number }).x).toBeUndefined();
  });

  test('clone is deep and equal; merge patch with itself is identity', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const c = clone(v);
        expect(deepEqual(c, JSON.parse(JSON.stringify(v)))).toBe(true);
        if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
          expect(deepEqual(applyMergePatch(v, {}), JSON.parse(JSON.stringify(v)))).toBe(true);
        }
      }),
    );
  });
  test('a merge patch shares no object with its target or patch (the model merges into stored objects)', () => {
    const objects = (v: unknown, out = new Set<object>()): Set<object> => {
      if (v !== null && typeof v === 'object') {
        out.add(v);
        for (const x of Object.values(v)) objects(x, out);
      }
      return out;
    };
    const obj = fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 3 }));
    fc.assert(
      fc.property(obj, obj, (target, patch) => {
        const inputs = objects(patch, objects(target));
        for (const o of objects(applyMergePatch(target, patch))) expect(inputs.has(o)).toBe(false);
      }),
    );
  });
});

describe('capture tokens', () => {
  test('every acquisition issues a token above every earlier one, and only the current token completes', () => {
    const steps = fc.array(
      fc.record({
        who: fc.integer({ min: 0, max: 3 }),
        dead: fc.boolean(),
        dt: fc.integer({ min: 0, max: 4000_000 }),
      }),
      {
        maxLength: 30,
      },
    );
    fc.assert(
      fc.property(steps, (ss) => {
        let c: Capture = capture('c');
        let now = T0_MS;
        let highest = 0;
        for (const s of ss) {
          now += s.dt;
          const holderPod = c.status?.claim?.holder;
          const out = decideAcquire(
            c,
            { name: `p${s.who}`, uid: `u${s.who}` },
            holderPod ? (s.dead ? { found: false } : { error: 'unknown' }) : undefined,
            now,
          );
          if (out.kind === 'acquired' || out.kind === 'tookOver' || out.kind === 'reentered') {
            const token = out.status.claim!.token;
            if (out.kind === 'reentered') expect(token).toBe(highest);
            else expect(token).toBeGreaterThan(highest);
            highest = token;
            c = { ...c, status: out.status };
            if (highest > 1)
              expect(() => completeClaim(c.status!, highest - 1, 'r', now)).toThrow(ClaimSuperseded);
          }
          expect(c.status?.epoch ?? 0).toBe(highest);
        }
      }),
    );
  });

  test('unknown liveness never takes a live claim', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2999_000 }), fc.string(), (dt, err) => {
        const c = capture('c', heldBy({ name: 'a', uid: 'ua' }));
        const out = decideAcquire(c, { name: 'b', uid: 'ub' }, { error: err }, T0_MS + dt);
        expect(out.kind).toBe('held');
      }),
    );
  });
});

describe('claim sets', () => {
  test('scale-in never picks a migrating or deleting claim and picks at most what was asked', () => {
    const claim = fc.record({
      podName: fc.option(fc.constantFrom('p1', 'p2', 'p3'), { nil: undefined }),
      sourcePod: fc.option(fc.constant('s'), { nil: undefined }),
      migrate: fc.boolean(),
      deleting: fc.boolean(),
      phase: fc.constantFrom('Pending', 'Bound', 'Migrating', 'Lost') as fc.Arbitrary<
        NonNullable<PodClaim['status']>['phase']
      >,
      age: fc.integer({ min: 0, max: 100 }),
    });
    fc.assert(
      fc.property(fc.array(claim, { maxLength: 12 }), fc.integer({ min: 0, max: 12 }), (cs, n) => {
        const claims = cs.map((x, i) =>
          podClaim(`c${i}`, (o) => {
            if (x.podName) o.spec.podName = x.podName;
            if (x.sourcePod) o.spec.sourcePod = x.sourcePod;
            if (x.migrate) o.metadata.annotations = { 'claimkit.dev/migrate': 'x' };
            if (x.deleting) o.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
            o.status = { phase: x.phase };
            o.metadata.creationTimestamp = new Date(T0_MS + x.age * 1000).toISOString();
          }),
        );
        const { victims, blocked } = chooseScaleIn(claims, n);
        expect(victims.length + blocked).toBe(n);
        for (const v of victims) {
          expect(isMigrating(v)).toBe(false);
          expect(v.metadata.deletionTimestamp).toBeUndefined();
        }
      }),
    );
  });

  test('claim names are stable, valid, and never reuse a taken name', () => {
    fc.assert(
      fc.property(
        fc.uuid(),
        fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 10 }),
        fc.integer({ min: 1, max: 5 }),
        (uid, takenOrdinals, count) => {
          const taken = new Set(takenOrdinals.map((o) => claimNameFor('set', uid, o)));
          const names = nextClaimNames('set', uid, taken, count);
          expect(names).toEqual(nextClaimNames('set', uid, taken, count));
          expect(new Set(names).size).toBe(names.length);
          for (const n of names) {
            expect(n).toMatch(/^set-[a-z0-9]{5}$/);
            expect(taken.has(n)).toBe(false);
          }
        },
      ),
    );
  });
});

describe('sortByCreationThenName', () => {
  test('orders exactly like the byCreationThenName comparator (timestamps parsed once)', () => {
    const stamp = fc.oneof(
      fc.constant(undefined),
      fc.constant('not a time'),
      fc
        .integer({ min: 0, max: 5 })
        .map((s) => new Date(T0_MS + s * 1000).toISOString().replace('.000Z', 'Z')),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), stamp), { maxLength: 30 }),
        (xs) => {
          const pods = xs.map(([name, t], i) => {
            const p = pod(`${name}-${i % 3}`);
            p.metadata.creationTimestamp = t;
            return p;
          });
          const names = (ps: typeof pods) =>
            ps.map((p) => `${p.metadata.name}@${p.metadata.creationTimestamp}`);
          expect(names(sortByCreationThenName(pods))).toEqual(names([...pods].sort(byCreationThenName)));
        },
      ),
    );
  });
});
