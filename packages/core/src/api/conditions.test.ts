import { describe, expect, test } from 'vitest';
import { findCondition, hasCondition, setCondition } from './conditions.ts';
import type { Condition } from './meta.ts';

const T0 = Date.UTC(2026, 0, 1);
const ready = (status: 'True' | 'False', reason = 'R'): Omit<Condition, 'lastTransitionTime'> => ({
  type: 'Ready',
  status,
  reason,
  message: 'm',
  observedGeneration: 1,
});

describe('setCondition', () => {
  test('appends a new type, keeps the others in place', () => {
    const other: Condition = {
      type: 'Other',
      status: 'True',
      reason: 'x',
      message: '',
      lastTransitionTime: 'then',
    };
    const out = setCondition([other], ready('True'), T0);
    expect(out.map((c) => c.type)).toEqual(['Other', 'Ready']);
    expect(out[0]).toBe(other);
    expect(findCondition(out, 'Ready')?.lastTransitionTime).toBe(new Date(T0).toISOString());
  });

  test('keeps lastTransitionTime while the status does not change, moves it when it does', () => {
    const first = setCondition(undefined, ready('True', 'A'), T0);
    const same = setCondition(first, ready('True', 'B'), T0 + 5000);
    expect(same[0]).toMatchObject({ reason: 'B', lastTransitionTime: first[0]!.lastTransitionTime });
    const flipped = setCondition(same, ready('False'), T0 + 9000);
    expect(flipped[0]!.lastTransitionTime).toBe(new Date(T0 + 9000).toISOString());
    expect(first).toHaveLength(1); // input untouched
    expect(first[0]!.reason).toBe('A');
  });

  test('replaces in place, so a no-op set compares equal', () => {
    const a = setCondition([], ready('True'), T0);
    const b = setCondition(setCondition(a, { ...ready('True'), type: 'Z' }, T0), ready('True'), T0 + 1);
    expect(b.map((c) => c.type)).toEqual(['Ready', 'Z']);
    expect(hasCondition(b, ready('True'))).toBe(true);
    expect(hasCondition(b, ready('False'))).toBe(false);
    expect(hasCondition(b, { ...ready('True'), observedGeneration: 2 })).toBe(false);
  });
});
