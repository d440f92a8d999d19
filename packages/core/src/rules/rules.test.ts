// The index of the rules cannot drift from the code: every place it names is looked up in the code
// (the real tables: SAFETY_RULES, the generated CRDs' rules, the policies' validations, the webhook's
// routes, doctor's checks, the invariant checkers, and the files it cites), and every one of those
// tables' entries, every invariant id a checker reports and every doctor check is in the index.
import { describe, expect, it } from 'vitest';
import { WEBHOOK_RULES } from '../admission/webhook-rules.ts';
import { CHECKS } from '../doctor/checks.ts';
import * as check from '../invariants/check.ts';
import { INVARIANT_IDS } from '../invariants/check.ts';
import * as claimSide from '../invariants/claim-side.ts';
import * as fencedResult from '../invariants/fenced-result.ts';
import * as poolRollout from '../invariants/pool-rollout.ts';
import * as poolSize from '../invariants/pool-size.ts';
import * as selfMigration from '../invariants/self-migration.ts';
import * as tracker from '../invariants/tracker.ts';
import { admissionPolicies, POLICY_NAMES } from '../policies/manifests.ts';
import { SAFETY_RULES } from '../reconcile/safety-rules.ts';
import { crdFor } from '../schema/crd.ts';
import { type CustomKind, KIND_SCHEMAS } from '../schema/kinds.ts';
import { rulesOf } from '../schema/rules.ts';
import { RULES } from './index.ts';
import type { Place } from './places.ts';

/** Every module of invariants/ (a new one goes here too). */
const INVARIANT_MODULES = [check, claimSide, fencedResult, poolRollout, poolSize, selfMigration, tracker];
/** The checkers: every function and class the invariant modules export. */
const CHECKERS = INVARIANT_MODULES.flatMap((m) =>
  Object.entries(m)
    .filter(([, v]) => typeof v === 'function')
    .map(([name]) => name),
);
/** The id checkPoolRollout reports (a type only; the annotation keeps it honest). */
const ROLLOUT: poolRollout.PoolRolloutViolation['invariant'] = 'rollout';

const KINDS = Object.keys(KIND_SCHEMAS) as CustomKind[];
const crdRules = (kind: CustomKind) =>
  rulesOf(crdFor(KIND_SCHEMAS[kind]).spec.versions[0]!.schema.openAPIV3Schema);
const policies = admissionPolicies();

type At<K extends Place['at']> = Extract<Place, { at: K }>;
const placesAt = <K extends Place['at']>(at: K): At<K>[] =>
  RULES.flatMap((r) => r.places).filter((p): p is At<K> => p.at === at);

describe('the rules index', () => {
  it('has unique ids, one-line statements, and names each facet of an invariant after it', () => {
    const ids = RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of RULES) {
      expect(r.statement, r.id).not.toMatch(/\n/);
      expect(r.places.length, r.id).toBeGreaterThan(0);
      if (r.invariant) expect(r.id === r.invariant || r.id.startsWith(`${r.invariant}.`), r.id).toBe(true);
      else expect(r.id, r.id).toMatch(/^[a-z][a-z0-9-]*$/);
    }
  });
});

describe('every place the index names exists', () => {
  it('safety rules: keys of SAFETY_RULES', () => {
    for (const p of placesAt('safety-rule')) expect(Object.keys(SAFETY_RULES)).toContain(p.rule);
  });

  it('CRD rules: CEL rules of the generated CRDs, by their message', () => {
    for (const p of placesAt('crd')) expect(crdRules(p.kind).map((r) => r.message)).toContain(p.message);
  });

  it("policies: validations of the policies' manifests, by their message", () => {
    for (const p of placesAt('policy')) {
      expect(POLICY_NAMES).toContain(p.policy);
      expect(policies[p.policy].policy.spec.validations.map((v) => v.message)).toContain(p.message);
    }
  });

  it("webhook paths: routes of the webhook's rules", () => {
    for (const p of placesAt('webhook')) expect(WEBHOOK_RULES.map((r) => r.path)).toContain(p.path);
  });

  it("doctor checks: codes of doctor's CHECKS", () => {
    for (const p of placesAt('doctor')) expect(Object.keys(CHECKS)).toContain(p.code);
  });

  it('invariant checkers: functions and classes that invariants/ exports', () => {
    for (const p of placesAt('check')) expect(CHECKERS).toContain(p.checker);
  });

  const inFiles = [...placesAt('core'), ...placesAt('controller')];
  it.each(inFiles.map((p) => [p.file, p] as const))(
    '%s exists and contains what the index says',
    async (_f, p) => {
      // Vite's ?raw import: the file's text (a missing file fails the import).
      const text: string = (await import(/* @vite-ignore */ `../${p.file}?raw`)).default;
      for (const m of p.mentions) expect(text, `${p.file} mentions ${m}`).toContain(m);
    },
  );
});

/** Every one of `all` is among `indexed`. */
function expectIndexed(indexed: string[], all: string[]): void {
  const missing = all.filter((x) => !indexed.includes(x));
  expect(missing, 'not in the rules index').toEqual([]);
}

describe('everything that enforces or checks a rule is in the index', () => {
  it('every invariant id the checkers report, and the pool rollout check', () => {
    expectIndexed(
      RULES.flatMap((r) => (r.invariant ? [r.invariant] : [])),
      [...INVARIANT_IDS, ROLLOUT],
    );
  });

  it('every doctor check', () => {
    expectIndexed(
      placesAt('doctor').map((p) => p.code),
      Object.keys(CHECKS),
    );
  });

  it('every safety rule', () => {
    expectIndexed(
      placesAt('safety-rule').map((p) => p.rule),
      Object.keys(SAFETY_RULES),
    );
  });

  it('every CEL rule of the generated CRDs', () => {
    expectIndexed(
      placesAt('crd').map((p) => `${p.kind}: ${p.message}`),
      KINDS.flatMap((kind) => crdRules(kind).map((r) => `${kind}: ${r.message}`)),
    );
  });

  it('every validation of the admission policies', () => {
    expectIndexed(
      placesAt('policy').map((p) => `${p.policy}: ${p.message}`),
      POLICY_NAMES.flatMap((name) =>
        policies[name].policy.spec.validations.map((v) => `${name}: ${v.message}`),
      ),
    );
  });

  it("every route of the webhook's rules", () => {
    expectIndexed(
      placesAt('webhook').map((p) => p.path),
      WEBHOOK_RULES.map((r) => r.path),
    );
  });

  it('every invariant checker', () => {
    expectIndexed(
      placesAt('check').map((p) => p.checker),
      CHECKERS,
    );
  });
});
