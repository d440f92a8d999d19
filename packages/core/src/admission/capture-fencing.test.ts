// C1 at the Capture is stated once in TypeScript (capture-fencing.ts, what /validate/captures
// enforces) and once in the generated CRD's CEL rules (schema/capture.ts, what the API server
// enforces). Both judge every status write of an exhaustive case table: from each status the CRD lets
// stand (old) to each status of the table (new). The webhook's verdict is the statement's on every
// case; the CEL rules and the statement agree on every case but the disagreements listed below,
// which are pinned (each must still occur) until someone decides which side is right.
import { describe, expect, it } from 'vitest';
import type { FieldCause } from '../api/errors.ts';
import type { Capture, CaptureStatus } from '../api/types.ts';
import { crdFor } from '../schema/crd.ts';
import { KIND_SCHEMAS } from '../schema/kinds.ts';
import { validateRules } from '../schema/rules.ts';
import { at, capture } from '../testing/fixtures.ts';
import { captureFencing, readFencing } from './capture-fencing.ts';
import { validateCapture } from './captures.ts';

const schema = crdFor(KIND_SCHEMAS.Capture).spec.versions[0]!.schema.openAPIV3Schema;
/** The C1 rules: those at the root (transition rules) and on status; spec's rules are not C1. */
const C1_RULES = [
  ...(schema['x-kubernetes-validations'] ?? []),
  ...(schema.properties?.status?.['x-kubernetes-validations'] ?? []),
];

const HOLDERS = { a: { name: 'pod-a', uid: 'uid-a' }, b: { name: 'pod-b', uid: 'uid-b' } };
type Holder = keyof typeof HOLDERS;
const claimOf = (h: Holder, token: number) => ({
  holder: HOLDERS[h],
  token,
  acquireTime: at(0),
  renewTime: at(0),
  leaseSeconds: 30,
});
const resultOf = (token: number, ref: string) => ({
  ref,
  token,
  capturedFrom: HOLDERS.a,
  completionTime: at(5),
});

/** No status, and every combination of epoch, claim (holder, token) and result (token, ref). */
function statuses(): (CaptureStatus | undefined)[] {
  const out: (CaptureStatus | undefined)[] = [undefined];
  const claims = [undefined, ...[1, 2, 3].flatMap((t) => (['a', 'b'] as const).map((h) => claimOf(h, t)))];
  const results = [undefined, resultOf(1, 'x'), resultOf(2, 'x'), resultOf(2, 'y'), resultOf(3, 'x')];
  for (const epoch of [undefined, 0, 1, 2, 3])
    for (const claim of claims)
      for (const result of results) {
        out.push({
          ...(epoch === undefined ? {} : { epoch }),
          ...(claim ? { claim } : {}),
          ...(result ? { result } : {}),
        });
      }
  return out;
}

const captureWith = (status: CaptureStatus | undefined): Capture => {
  const c = capture('c');
  if (status) c.status = status;
  return c;
};

const show = (s: CaptureStatus | undefined): string =>
  s === undefined
    ? 'no status'
    : `{epoch ${s.epoch ?? '-'}, claim ${s.claim ? `${s.claim.holder.name}/${s.claim.token}` : '-'}, result ${s.result ? `${s.result.token}/${s.result.ref}` : '-'}}`;

interface Case {
  old: CaptureStatus | undefined;
  next: CaptureStatus | undefined;
  name: string;
  /** The CRD's causes for the write, from the generated schema's CEL. */
  cel: FieldCause[];
  /** The statement's violations. */
  ts: FieldCause[];
}

function cases(): Case[] {
  const all = statuses();
  // Old states: what the CRD lets stand (its rules pass as on a create); others need a writer that
  // bypassed them, and the CRD ratchets rules for such objects where the webhook does not.
  const stored = all.filter((s) => validateRules(captureWith(s), schema, '', undefined).length === 0);
  return stored.flatMap((old) =>
    all.map((next) => {
      const f = captureFencing(readFencing(old), readFencing(next));
      return {
        old,
        next,
        name: `${show(old)} -> ${show(next)}`,
        cel: validateRules(captureWith(next), schema, '', captureWith(old)),
        ts: [...f.epoch, ...f.claim, ...f.result],
      };
    }),
  );
}

const celMessage = (detail: string) => `Invalid value: ${detail}`;

/**
 * Where the CEL rules refuse a write the statement (and so the webhook) lets through: each a
 * finding for review, not a decision. Every disagreeing case must be one of these, and each must
 * still occur.
 */
const KNOWN_DISAGREEMENTS: { name: string; celCause: string; matches: (c: Case) => boolean }[] = [
  // None left. The two found when this test was written were resolved in the statement (so the
  // webhook refuses them too): an epoch that moves without a new claim whose token is the new epoch
  // (DESIGN: "the epoch moves only with the claim it issues"), and an epoch of 0 removed.
];

describe('C1 at the Capture: the TypeScript statement and the CRD CEL rules', () => {
  const table = cases();

  it('the table judges thousands of writes, and each C1 CEL rule both refuses and accepts some', () => {
    expect(table.length).toBeGreaterThan(5000);
    for (const rule of C1_RULES) {
      const refused = table.filter((c) => c.cel.some((x) => x.message === celMessage(rule.message ?? '')));
      expect(refused.length, rule.message).toBeGreaterThan(0);
      expect(refused.length, rule.message).toBeLessThan(table.length);
    }
  });

  it("the webhook's /validate/captures reports exactly the statement's violations on every status write", () => {
    const differ = table.filter((c) => {
      const v = validateCapture({
        operation: 'UPDATE',
        kind: 'Capture',
        subResource: 'status',
        userInfo: {},
        object: captureWith(c.next),
        oldObject: captureWith(c.old),
      });
      return JSON.stringify(v.allowed ? [] : v.violations) !== JSON.stringify(c.ts);
    });
    expect(differ.map((c) => c.name).slice(0, 10)).toEqual([]);
  });

  it('the statement refuses every kind of C1 write it knows', () => {
    const fields = new Set(table.flatMap((c) => c.ts.map((v) => v.field)));
    expect([...fields].sort()).toEqual([
      'status.claim',
      'status.claim.holder',
      'status.claim.token',
      'status.epoch',
      'status.result.token',
    ]);
  });

  it('agree on every write but the known disagreements, which are all CEL refusing what the statement allows', () => {
    const unexplained: string[] = [];
    const seen = new Set<string>();
    for (const c of table) {
      if ((c.cel.length === 0) === (c.ts.length === 0)) continue;
      const known = KNOWN_DISAGREEMENTS.find(
        (d) => c.ts.length === 0 && c.cel.every((x) => x.message === d.celCause) && d.matches(c),
      );
      if (known) seen.add(known.name);
      else
        unexplained.push(
          `${c.name}: CEL ${JSON.stringify(c.cel.map((x) => x.message))}, TypeScript ${JSON.stringify(c.ts.map((x) => x.message))}`,
        );
    }
    expect(unexplained.slice(0, 10)).toEqual([]);
    // A disagreement that no longer occurs was resolved: drop it from the list.
    expect([...seen].sort()).toEqual(KNOWN_DISAGREEMENTS.map((d) => d.name).sort());
  });
});
