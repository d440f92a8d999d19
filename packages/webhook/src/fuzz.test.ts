// Garbage in: random and malformed bodies, wrong kinds, huge and deep objects, missing fields.
// Every answer is a 400 or an AdmissionReview (a denial carries a message); never a throw, a 500 or a hang.

import type { CaptureStatus } from '@claimkit/core';
import {
  capture,
  captureClaim,
  captureResult,
  captureStatus,
  claimedBy,
  podClaim,
  podPool,
  withSpec,
  withState,
  withUid,
} from '@claimkit/core/testing';
import fc from 'fast-check';
import type { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ROUTES } from './app.ts';
import { type Logger, silentLogger } from './logger.ts';
import { CONTROLLER, malformed, poolPod, reviewFor, testApp, webSet } from './testing/review.ts';

const PATHS = ROUTES.map((r) => r.path);

function harness(): { app: Hono; errors: string[] } {
  const errors: string[] = [];
  const logger: Logger = {
    ...silentLogger,
    error: (m, f) => errors.push(`${m} ${JSON.stringify(f)}`),
  };
  const { app, index } = testApp({ logger });
  index.upsert(podClaim('other', withSpec({ podName: 'p1' })));
  return { app, errors };
}

async function check(app: Hono, path: string, body: string): Promise<void> {
  const started = Date.now();
  const res = await Promise.race([
    app.request(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } }),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('hang: no answer in 5 s')), 5000)),
  ]);
  expect(Date.now() - started).toBeLessThan(5000);
  const text = await res.text();
  expect([200, 400], text.slice(0, 300)).toContain(res.status);
  const out = JSON.parse(text) as {
    error?: string;
    kind?: string;
    response?: { uid?: unknown; allowed?: unknown; status?: { message?: unknown; code?: unknown } };
  };
  if (res.status === 400) {
    expect(typeof out.error).toBe('string');
    expect(out.error!.length).toBeGreaterThan(0);
    return;
  }
  expect(out.kind).toBe('AdmissionReview');
  expect(typeof out.response?.uid).toBe('string');
  expect(typeof out.response?.allowed).toBe('boolean');
  if (out.response?.allowed === false) {
    expect(typeof out.response.status?.message).toBe('string');
    expect(String(out.response.status?.message ?? '').length).toBeGreaterThan(0);
    expect([400, 403]).toContain(out.response.status?.code);
  }
}

const VALID: unknown[] = [
  reviewFor({ kind: 'Pod', object: poolPod('p', withState('Idle')) }),
  reviewFor({
    kind: 'Pod',
    oldObject: poolPod('p', claimedBy(podClaim('a', withUid('ua')))),
    object: poolPod('p', claimedBy(podClaim('b', withUid('ub')))),
  }),
  reviewFor({
    kind: 'Capture',
    oldObject: capture('cap', captureStatus({ epoch: 3, claim: captureClaim('pod-a', 3) })),
    object: capture('cap', captureStatus({ epoch: 3, result: captureResult(3) })),
    subResource: 'status',
  }),
  reviewFor({
    kind: 'PodClaim',
    user: CONTROLLER,
    oldObject: podClaim('c', withSpec({ podName: 'p0' })),
    object: podClaim('c', withSpec({ podName: 'p1', sourcePod: 'p0', nodeName: 'n' })),
  }),
  reviewFor({ kind: 'PodClaimSet', oldObject: webSet(), object: webSet(withSpec({ replicas: 5 })) }),
  reviewFor({ kind: 'PodPool', object: podPool('web') }),
];

/** Every path into a JSON value (object keys and array indexes). */
function pathsOf(v: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(prefix);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) pathsOf(v[i], [...prefix, i], out);
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) pathsOf(x, [...prefix, k], out);
  }
  return out;
}

function mutate(base: unknown, path: (string | number)[], value: unknown, del: boolean): unknown {
  if (path.length === 0) return del ? undefined : value;
  const copy = JSON.parse(JSON.stringify(base)) as Record<string | number, unknown>;
  let cur = copy as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (del) delete cur[last];
  else cur[last] = value;
  return copy;
}

const mutation = fc
  .integer({ min: 0, max: VALID.length - 1 })
  .chain((i) => {
    const paths = pathsOf(VALID[i]);
    return fc.tuple(
      fc.constant(i),
      fc.array(
        fc.tuple(
          fc.constantFrom(...paths),
          fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.anything()),
          fc.boolean(),
        ),
        { minLength: 1, maxLength: 4 },
      ),
    );
  })
  .map(([i, muts]) => {
    let v = VALID[i];
    for (const [p, value, del] of muts) {
      try {
        v = mutate(v, p, value, del);
      } catch {
        // The path vanished under an earlier mutation; keep what we have.
      }
    }
    return v;
  });

function stringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? 'undefined';
  } catch {
    return String(v);
  }
}

describe('fuzzing the admission endpoints', () => {
  it('random strings and bytes', async () => {
    const { app, errors } = harness();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PATHS),
        fc.oneof(fc.string(), fc.string({ unit: 'binary' })),
        (path, s) => check(app, path, s),
      ),
      { numRuns: 300 },
    );
    expect(errors).toEqual([]);
  });

  it('random JSON values', async () => {
    const { app, errors } = harness();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PATHS), fc.jsonValue(), (path, v) =>
        check(app, path, stringify(v)),
      ),
      { numRuns: 300 },
    );
    expect(errors).toEqual([]);
  });

  it('AdmissionReviews with random requests', async () => {
    const { app, errors } = harness();
    const request = fc.record(
      {
        uid: fc.oneof(fc.uuid(), fc.string(), fc.jsonValue()),
        kind: fc.oneof(
          fc.record({ group: fc.constantFrom('', 'claimkit.dev'), version: fc.string(), kind: fc.string() }),
          fc.jsonValue(),
        ),
        operation: fc.oneof(fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT'), fc.jsonValue()),
        userInfo: fc.oneof(
          fc.record({ username: fc.string(), groups: fc.array(fc.oneof(fc.string(), fc.jsonValue())) }),
          fc.jsonValue(),
        ),
        object: fc.oneof(fc.jsonValue(), fc.object()),
        oldObject: fc.oneof(fc.jsonValue(), fc.object()),
        subResource: fc.jsonValue(),
        namespace: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PATHS), request, (path, req) =>
        check(
          app,
          path,
          stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req }),
        ),
      ),
      { numRuns: 400 },
    );
    expect(errors).toEqual([]);
  });

  it('valid reviews with random fields replaced or removed, sent to every path (wrong kinds included)', async () => {
    const { app, errors } = harness();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PATHS), mutation, (path, v) => check(app, path, stringify(v))),
      { numRuns: 1000 },
    );
    expect(errors).toEqual([]);
  });

  it('huge and deeply nested objects', async () => {
    const { app, errors } = harness();
    const labels: Record<string, string> = {};
    for (let i = 0; i < 50_000; i++) labels[`k${i}`] = 'v'.repeat(40);
    const bigPod = poolPod('p', withState('Idle'));
    bigPod.metadata.labels = { ...bigPod.metadata.labels, ...labels };
    await check(app, '/validate/pods', JSON.stringify(reviewFor({ kind: 'Pod', object: bigPod })));

    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const deepObj = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const base = reviewFor({
      kind: 'Capture',
      oldObject: capture(
        'cap',
        captureStatus({
          epoch: 3,
          claim: captureClaim('pod-a', 3),
          result: malformed<CaptureStatus['result']>({ x: 0 }),
        }),
      ),
      object: capture(
        'cap',
        captureStatus({
          epoch: 3,
          claim: captureClaim('pod-a', 3),
          result: malformed<CaptureStatus['result']>({ x: 1 }),
        }),
      ),
    });
    for (const n of [1000, 100_000]) {
      for (const path of PATHS) {
        await check(app, path, deep(n));
        await check(app, path, deepObj(n));
        const s = JSON.stringify(base).replace('{"x":0}', deepObj(n)).replace('{"x":1}', deepObj(n));
        await check(app, path, s);
      }
    }
    const many = JSON.stringify(
      reviewFor({
        kind: 'PodClaimSet',
        object: webSet(
          withSpec({
            selector: { matchExpressions: Array(20_000).fill({ key: 'k', operator: 'Exists' }) },
          }),
        ),
      }),
    );
    await check(app, '/validate/podclaimsets', many);
    await check(app, '/validate/pods', 'x'.repeat(9 * 1024 * 1024));
    expect(errors).toEqual([]);
  }, 60_000);
});
