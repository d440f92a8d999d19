// The safety rules are data: nothing can switch them for everybody, and a broken variant replaces
// exactly the one rule it names.
import { describe, expect, test } from 'vitest';
import { BROKEN_RULES, type BrokenRule, rulesBreaking } from '../testing/broken-rules.ts';
import { SAFETY_RULES, type SafetyRules } from './safety-rules.ts';

describe('safety rules', () => {
  test("core's rules cannot be replaced in place (no global switch)", () => {
    expect(Object.isFrozen(SAFETY_RULES)).toBe(true);
    expect(() => {
      (SAFETY_RULES as { bindPodWrite: unknown }).bindPodWrite = () => undefined;
    }).toThrow(TypeError);
  });

  test('each broken variant replaces exactly one rule and leaves core untouched', () => {
    for (const [name, variant] of Object.entries(BROKEN_RULES) as [BrokenRule, Partial<SafetyRules>][]) {
      const broken = rulesBreaking(name);
      const changed = (Object.keys(SAFETY_RULES) as (keyof SafetyRules)[]).filter(
        (k) => broken[k] !== SAFETY_RULES[k],
      );
      expect(changed, name).toEqual(Object.keys(variant));
      expect(changed, name).toHaveLength(1);
    }
    expect(rulesBreaking()).toEqual(SAFETY_RULES);
  });
});
