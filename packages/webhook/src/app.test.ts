import type { CaptureStatus, LostPolicy, PodClaimStatus, PodPoolSource, PodState } from '@claimkit/core';
import {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_SHARD,
  ANNOTATION_SOURCE_REF,
  ANNOTATION_SOURCE_TOKEN,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
} from '@claimkit/core';
import { MemoryPodClaimIndex } from '@claimkit/core/admission';
import {
  capture,
  captureClaim,
  captureResult,
  captureStatus,
  claimedBy,
  claimStatus,
  deleting,
  inNamespace,
  pinnedToShard,
  pod,
  podClaim,
  podPool,
  withAnnotations,
  withFinalizers,
  withLabels,
  withSpec,
  withState,
  withUid,
} from '@claimkit/core/testing';
import { describe, expect, it } from 'vitest';
import { ALICE, CONTROLLER, malformed, poolPod, post, reviewFor, testApp, webSet } from './testing/review.ts';

type Opts = Parameters<typeof reviewFor>[0];

/** The claim's binding, as the controller records it in status. */
const withBinding = (b: Partial<PodClaimStatus>) => claimStatus(b);

async function judge(path: string, opts: Opts, app = testApp().app) {
  const r = await post(app, path, reviewFor(opts));
  expect(r.status).toBe(200);
  const resp = r.review!.response;
  return resp;
}

async function allowed(path: string, opts: Opts, app = testApp().app) {
  const resp = await judge(path, opts, app);
  expect(resp.status?.message, 'expected the request to be allowed').toBeUndefined();
  expect(resp.allowed).toBe(true);
  return resp;
}

async function denied(path: string, opts: Opts, fields: string[], app = testApp().app) {
  const resp = await judge(path, opts, app);
  expect(resp.allowed).toBe(false);
  expect(resp.status?.code).toBe(403);
  const causes = resp.status?.details?.causes ?? [];
  expect(causes.map((c) => c.field).sort()).toEqual([...fields].sort());
  for (const f of fields) expect(resp.status?.message).toContain(`${f}: `);
  return resp;
}

const CAP = '/validate/captures';
const CLAIMS = '/validate/podclaims';
const PODS = '/validate/pods';
const SETS = '/validate/podclaimsets';
const POOLS = '/validate/podpools';

describe('AdmissionReview protocol', () => {
  it('echoes the request uid in allowed and denied responses', async () => {
    const { app } = testApp();
    const ok = await post(app, CAP, reviewFor({ kind: 'Capture', object: capture('cap'), uid: 'abc-123' }));
    expect(ok.review).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'abc-123', allowed: true },
    });
    const no = await post(
      app,
      CAP,
      reviewFor({
        kind: 'Capture',
        uid: 'def-456',
        oldObject: capture('cap', captureStatus({ epoch: 3 })),
        object: capture('cap', captureStatus({ epoch: 2 })),
      }),
    );
    expect(no.review?.response).toMatchObject({ uid: 'def-456', allowed: false, status: { code: 403 } });
  });

  it('answers 400 to bodies that are not AdmissionReviews', async () => {
    const { app } = testApp();
    for (const body of [
      'not json',
      '[]',
      'null',
      '42',
      '{}',
      { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'x' } },
      { apiVersion: 'admission.k8s.io/v1', kind: 'Pod' },
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' },
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } },
    ]) {
      const r = await post(app, PODS, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(JSON.parse(r.text).error).toEqual(expect.any(String));
    }
  });

  it('denies with code 400 an AdmissionReview whose request cannot be judged', async () => {
    const { app } = testApp();
    const base = reviewFor({ kind: 'Pod', object: pod('p') }) as { request: Record<string, unknown> };
    const cases: Record<string, unknown>[] = [
      { ...base.request, operation: 'EXPLODE' },
      { ...base.request, object: null },
      { ...base.request, object: 'a string' },
      { ...base.request, operation: 'UPDATE', oldObject: null },
    ];
    for (const request of cases) {
      const r = await post(app, PODS, { ...base, request });
      expect(r.status).toBe(200);
      expect(r.review?.response).toMatchObject({
        uid: base.request.uid,
        allowed: false,
        status: { code: 400, message: expect.any(String) },
      });
    }
  });

  it('denies with code 400 a kind sent to the wrong path', async () => {
    const r = await post(testApp().app, CAP, reviewFor({ kind: 'Pod', object: pod('p') }));
    expect(r.review?.response).toMatchObject({ allowed: false, status: { code: 400 } });
    expect(r.review?.response.status?.message).toContain('judges Capture');
    const body = reviewFor({ kind: 'Capture', object: pod('p') });
    const r2 = await post(testApp().app, CAP, body);
    expect(r2.review?.response).toMatchObject({ allowed: false, status: { code: 400 } });
  });

  it('answers 400 to a body over the size limit', async () => {
    const { app } = testApp({ maxBodyBytes: 1000 });
    const big = reviewFor({ kind: 'Pod', object: pod('p', withLabels({ x: 'y'.repeat(2000) })) });
    expect((await post(app, PODS, big)).status).toBe(400);
  });

  it('allows DELETE and CONNECT without looking at the objects', async () => {
    await allowed(CLAIMS, {
      kind: 'PodClaim',
      operation: 'DELETE',
      oldObject: podClaim('c', withSpec({ podName: 'p' })),
    });
    await allowed(PODS, { kind: 'Pod', operation: 'DELETE', oldObject: poolPod('p', withState('Bound')) });
    await allowed(PODS, { kind: 'Pod', operation: 'CONNECT', object: { kind: 'PodExecOptions' } });
  });

  it('serves /healthz, /readyz and /metrics', async () => {
    const index = new MemoryPodClaimIndex();
    const { app } = testApp({ index });
    expect((await app.request('/healthz')).status).toBe(200);
    expect((await app.request('/readyz')).status).toBe(503);
    index.markSynced();
    expect((await app.request('/readyz')).status).toBe(200);
    await post(app, PODS, reviewFor({ kind: 'Pod', object: poolPod('p', withState('Idle')) }));
    await post(app, PODS, reviewFor({ kind: 'Pod', object: poolPod('p', withState('Nope' as PodState)) }));
    await post(app, PODS, 'garbage');
    const res = await app.request('/metrics');
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('claimkit_webhook_requests_total{path="/validate/pods",result="allowed"} 1');
    expect(text).toContain('claimkit_webhook_requests_total{path="/validate/pods",result="denied"} 1');
    expect(text).toContain('claimkit_webhook_requests_total{path="/validate/pods",result="bad_request"} 1');
    for (const result of ['allowed', 'denied', 'bad_request']) {
      expect(text).toContain(
        `claimkit_webhook_request_duration_seconds_count{path="/validate/pods",result="${result}"} 1`,
      );
      expect(text).toContain(
        `claimkit_webhook_request_duration_seconds_bucket{path="/validate/pods",result="${result}",le="+Inf"} 1`,
      );
    }
    expect(text).toContain(
      'controller_runtime_webhook_requests_total{code="200",webhook="/validate/pods"} 2',
    );
    expect(text).toContain(
      'controller_runtime_webhook_requests_total{code="400",webhook="/validate/pods"} 1',
    );
    expect(text).toContain('controller_runtime_webhook_latency_seconds_count{webhook="/validate/pods"} 3');
    expect(text).toMatch(/^process_resident_memory_bytes \d+$/m);
    expect(text).toMatch(/^nodejs_version_info\{version="v[\d.]+"\} 1$/m);
    expect(text).toContain(
      `claimkit_webhook_violations_total{field="metadata.labels[${LABEL_STATE}]",path="/validate/pods"} 1`,
    );
  });
});

describe('/validate/captures', () => {
  // Statuses written by hand, malformed on purpose in places (a string token, a claim without holder).
  const status = (s: Record<string, unknown>) => captureStatus(s as Partial<CaptureStatus>);
  const upd = (o: Record<string, unknown>, n: Record<string, unknown>, user = CONTROLLER): Opts => ({
    kind: 'Capture',
    oldObject: capture('cap', status(o)),
    object: capture('cap', status(n)),
    user,
    subResource: 'status',
  });

  it('allows creation, a first claim, renewals, a takeover with a higher token and a fenced result', async () => {
    await allowed(CAP, { kind: 'Capture', object: capture('cap') });
    await allowed(CAP, upd({}, { phase: 'Capturing', epoch: 1, claim: captureClaim('pod-a', 1) }));
    const held = { phase: 'Capturing', epoch: 3, claim: captureClaim('pod-a', 3) };
    await allowed(
      CAP,
      upd(held, { ...held, claim: { ...captureClaim('pod-a', 3), renewTime: '2026-01-01T00:05:00Z' } }),
    );
    await allowed(CAP, upd(held, { ...held, claim: { ...captureClaim('pod-a', 3), job: { id: 'j1' } } }));
    await allowed(CAP, upd(held, { ...held, epoch: 4, claim: captureClaim('pod-b', 4) }));
    await allowed(CAP, upd(held, { ...held, epoch: 4, claim: captureClaim('pod-a', 4) })); // re-acquire
    // The holder closes its claim and writes the result with its token, in one write (any user).
    await allowed(CAP, upd(held, { phase: 'Captured', epoch: 3, result: captureResult(3) }, ALICE));
    const done = { phase: 'Captured', epoch: 3, result: captureResult(3) };
    await allowed(CAP, upd(done, { ...done, attempts: 1 })); // unchanged result
    await allowed(CAP, upd(done, { ...done, epoch: 4, claim: captureClaim('pod-c', 4) }));
    await allowed(CAP, upd(held, { phase: 'Failed', epoch: 3, lastError: 'boom' }));
  });

  it('denies a spec whose selector would make every pod in the namespace a candidate', async () => {
    const withSelector = (selector: unknown, status: Record<string, unknown> = {}) => {
      const c = capture('cap', captureStatus(status)) as unknown as { spec: Record<string, unknown> };
      c.spec.selector = selector;
      return c;
    };
    for (const sel of [{}, { matchLabels: {} }, { matchLabels: {}, matchExpressions: [] }]) {
      const r = await denied(CAP, { kind: 'Capture', object: withSelector(sel) }, ['spec.selector']);
      expect(r.status?.message).toContain('every pod in the namespace');
    }
    await denied(
      CAP,
      { kind: 'Capture', oldObject: capture('cap'), object: withSelector({}), operation: 'UPDATE' },
      ['spec.selector'],
    );
    await allowed(CAP, {
      kind: 'Capture',
      object: withSelector({ matchExpressions: [{ key: 'app', operator: 'Exists' }] }),
    });
    // An older object with an empty selector can still be worked on: status writes, other spec fields.
    const old = withSelector({}, { epoch: 1 });
    await allowed(CAP, {
      ...upd({}, {}),
      oldObject: old,
      object: withSelector({}, { epoch: 1, attempts: 1 }),
    });
    const relabel = withSelector({}, { epoch: 1 });
    (relabel as { metadata?: Record<string, unknown> }).metadata = { name: 'cap', labels: { a: 'b' } };
    await allowed(CAP, { kind: 'Capture', oldObject: old, object: relabel, operation: 'UPDATE' });
  });

  it('denies a decreasing epoch', async () => {
    await denied(CAP, upd({ epoch: 5 }, { epoch: 4 }), ['status.epoch']);
    await denied(CAP, upd({ epoch: 5 }, {}), ['status.epoch']);
    await denied(CAP, upd({ epoch: 5 }, { epoch: -1 }), ['status.epoch']);
    await denied(CAP, upd({ epoch: 5 }, { epoch: 5.5 }), ['status.epoch']);
  });

  it('denies a new holder without a higher token', async () => {
    const held = { epoch: 5, claim: captureClaim('pod-a', 5) };
    const r = await denied(CAP, upd(held, { epoch: 5, claim: captureClaim('pod-b', 5) }), [
      'status.claim.holder',
    ]);
    expect(r.status?.message).toContain('a new holder needs a higher token');
    await denied(
      CAP,
      upd({ epoch: 5, claim: captureClaim('pod-a', 3) }, { epoch: 5, claim: captureClaim('pod-b', 4) }),
      ['status.claim.token'],
    );
    // The epoch moves to 7 with a claim holding 6: the epoch moved without its claim, and the token is not the epoch.
    await denied(CAP, upd(held, { epoch: 7, claim: captureClaim('pod-b', 6) }), [
      'status.epoch',
      'status.claim.token',
    ]);
    // The epoch moved with no claim at all (the CRD's CEL refuses it too), or was removed.
    await denied(CAP, upd(held, { epoch: 6 }), ['status.epoch']);
    await denied(CAP, upd({ epoch: 0 }, {}), ['status.epoch']);
    await denied(CAP, upd(held, { epoch: 5, claim: captureClaim('pod-b', 6) }), ['status.claim.token']);
    await denied(CAP, upd({}, { epoch: 1, claim: { token: 1 } }), [
      'status.claim.holder.name',
      'status.claim.holder.uid',
    ]);
    // Not a token: the claim is malformed, and so the epoch moved without a claim holding 1.
    await denied(CAP, upd({}, { epoch: 1, claim: { ...captureClaim('pod-a', 1), token: 'one' } }), [
      'status.epoch',
      'status.claim.token',
    ]);
  });

  it('denies a result without the current claim token', async () => {
    const held = { phase: 'Capturing', epoch: 5, claim: captureClaim('pod-b', 5) };
    const stale = await denied(
      CAP,
      upd(held, { phase: 'Captured', epoch: 5, result: captureResult(4) }, ALICE),
      ['status.result.token'],
    );
    expect(stale.status?.message).toContain('no result without the current claim token');
    await denied(CAP, upd({ epoch: 5 }, { epoch: 5, result: captureResult(5) }), ['status.result.token']);
    await denied(CAP, upd(held, { epoch: 5, result: { ...captureResult(5), token: undefined } }), [
      'status.result.token',
    ]);
    await denied(CAP, upd(held, { epoch: 6, claim: captureClaim('pod-c', 6), result: captureResult(5) }), [
      'status.result.token',
    ]);
    await denied(CAP, upd(held, { phase: 'Captured', epoch: 5, result: { ...captureResult(5), ref: '' } }), [
      'status.result.ref',
    ]);
    // The right token, but the claim stays open: what detection would call an unfenced result.
    const open = await denied(CAP, upd(held, { ...held, result: captureResult(5) }), ['status.claim']);
    expect(open.status?.message).toContain('written only by the write that closes its claim');
    await denied(
      CAP,
      { kind: 'Capture', object: capture('cap', captureStatus({ epoch: 1, result: captureResult(1) })) },
      ['status.result.token'],
    );
  });

  it('lists every violation of one write', async () => {
    const held = { epoch: 5, claim: captureClaim('pod-b', 5) };
    const r = await denied(
      CAP,
      upd(held, { epoch: 4, claim: captureClaim('pod-c', 5), result: captureResult(3) }),
      ['status.epoch', 'status.claim.token', 'status.result.token'],
    );
    expect(r.status?.details).toMatchObject({ kind: 'Capture', group: 'claimkit.dev', name: 'cap' });
  });

  it('warns when a durable result is removed', async () => {
    const done = { phase: 'Captured', epoch: 3, result: captureResult(3) };
    const r = await allowed(CAP, upd(done, { phase: 'Pending', epoch: 3 }));
    expect(r.warnings?.join()).toContain('status.result is removed');
  });
});

describe('/validate/podclaims', () => {
  it('allows users to create and annotate claims, and the controller to bind and migrate', async () => {
    await allowed(CLAIMS, { kind: 'PodClaim', object: podClaim('c1') });
    await allowed(CLAIMS, {
      kind: 'PodClaim',
      subResource: 'status',
      oldObject: podClaim('c1', withBinding({ podName: 'p1' })),
      object: podClaim(
        'c1',
        withBinding({ podName: 'p1' }),
        withAnnotations({ 'claimkit.dev/migrate': 'drain' }),
      ),
    });
    await allowed(CLAIMS, {
      kind: 'PodClaim',
      subResource: 'status',
      user: CONTROLLER,
      oldObject: podClaim('c1'),
      object: podClaim('c1', withBinding({ podName: 'p1', nodeName: 'n1' })),
    });
    const { app, index } = testApp();
    index.upsert(podClaim('c1', withBinding({ podName: 'p1' })));
    await allowed(
      CLAIMS,
      {
        kind: 'PodClaim',
        subResource: 'status',
        user: CONTROLLER,
        oldObject: podClaim('c1', withBinding({ podName: 'p1', nodeName: 'n1' })),
        object: podClaim('c1', withBinding({ podName: 'p2', sourcePod: 'p1', nodeName: 'n2' })),
      },
      app,
    );
  });

  it('lets configured controller groups write podName', async () => {
    const { app } = testApp({ controller: { usernames: [], groups: ['claimkit:controllers'] } });
    await allowed(
      CLAIMS,
      {
        kind: 'PodClaim',
        subResource: 'status',
        user: { username: 'bot', groups: ['claimkit:controllers'] },
        oldObject: podClaim('c1'),
        object: podClaim('c1', withBinding({ podName: 'p1' })),
      },
      app,
    );
    await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        subResource: 'status',
        user: CONTROLLER,
        oldObject: podClaim('c1'),
        object: podClaim('c1', withBinding({ podName: 'p1' })),
      },
      ['status.podName'],
      app,
    );
  });

  it('denies a poolName change', async () => {
    await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        user: CONTROLLER,
        oldObject: podClaim('c1'),
        object: podClaim('c1', withSpec({ poolName: 'db' })),
      },
      ['spec.poolName'],
    );
    await denied(CLAIMS, { kind: 'PodClaim', object: podClaim('c1', withSpec({ poolName: '' })) }, [
      'spec.poolName',
    ]);
  });

  it('denies sourcePod == podName', async () => {
    await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        subResource: 'status',
        user: CONTROLLER,
        oldObject: podClaim('c1', withBinding({ podName: 'p1' })),
        object: podClaim('c1', withBinding({ podName: 'p1', sourcePod: 'p1' })),
      },
      ['status.sourcePod'],
    );
  });

  it('denies podName, nodeName and sourcePod written by anyone but the controller', async () => {
    const r = await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        subResource: 'status',
        user: ALICE,
        oldObject: podClaim('c1', withBinding({ podName: 'p1', nodeName: 'n1' })),
        object: podClaim('c1', withBinding({ podName: 'p2', nodeName: 'n2', sourcePod: 'p1' })),
      },
      ['status.podName', 'status.nodeName', 'status.sourcePod'],
    );
    expect(r.status?.message).toContain('"alice"');
    await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        subResource: 'status',
        user: ALICE,
        object: podClaim('c1', withBinding({ podName: 'p1' })),
      },
      ['status.podName'],
    );
    await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        subResource: 'status',
        user: ALICE,
        oldObject: podClaim('c1', withBinding({ podName: 'p1' })),
        object: podClaim('c1'),
      },
      ['status.podName'],
    );
  });

  it('denies a pod already referenced by another claim (podName or sourcePod)', async () => {
    const { app, index } = testApp();
    index.upsert(podClaim('other', withBinding({ podName: 'p1' })));
    index.upsert(podClaim('mover', withBinding({ podName: 'p3', sourcePod: 'p2' })));
    const r = await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        subResource: 'status',
        user: CONTROLLER,
        oldObject: podClaim('c1'),
        object: podClaim('c1', withBinding({ podName: 'p1' })),
      },
      ['status.podName'],
      app,
    );
    expect(r.status?.message).toContain('already referenced by claim "other"');
    await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        subResource: 'status',
        user: CONTROLLER,
        oldObject: podClaim('c1'),
        object: podClaim('c1', withBinding({ podName: 'p2' })),
      },
      ['status.podName'],
      app,
    );
    // A claim in another namespace does not count; nor does a deleting claim (its finalizer is releasing).
    index.upsert(podClaim('elsewhere', withBinding({ podName: 'p9' }), inNamespace('other-ns')));
    index.upsert(podClaim('going', withBinding({ podName: 'p8' }), deleting()));
    for (const p of ['p9', 'p8']) {
      await allowed(
        CLAIMS,
        {
          kind: 'PodClaim',
          subResource: 'status',
          user: CONTROLLER,
          oldObject: podClaim('c1'),
          object: podClaim('c1', withBinding({ podName: p })),
        },
        app,
      );
    }
    // Once the other claim lets go, the pod can be taken.
    index.upsert(podClaim('other'));
    await allowed(
      CLAIMS,
      {
        kind: 'PodClaim',
        subResource: 'status',
        user: CONTROLLER,
        oldObject: podClaim('c1'),
        object: podClaim('c1', withBinding({ podName: 'p1' })),
      },
      app,
    );
    // An unchanged podName is not re-checked (a finalizer's write must always go through).
    index.upsert(podClaim('dup', withBinding({ podName: 'p5' })));
    await allowed(
      CLAIMS,
      {
        kind: 'PodClaim',
        subResource: 'status',
        user: ALICE,
        oldObject: podClaim('c1', withBinding({ podName: 'p5' })),
        object: podClaim('c1', withBinding({ podName: 'p5' }), withFinalizers()),
      },
      app,
    );
  });

  it('denies reference changes until the index has synced; warns when it is disabled', async () => {
    const upd: Opts = {
      kind: 'PodClaim',
      subResource: 'status',
      user: CONTROLLER,
      oldObject: podClaim('c1'),
      object: podClaim('c1', withBinding({ podName: 'p1' })),
    };
    const r = await denied(
      CLAIMS,
      upd,
      ['status.podName'],
      testApp({ index: new MemoryPodClaimIndex() }).app,
    );
    expect(r.status?.message).toContain('not synced');
    const off = testApp({ index: new MemoryPodClaimIndex({ enabled: false, synced: true }) }).app;
    const ok = await allowed(CLAIMS, upd, off);
    expect(ok.warnings?.join()).toContain('claim index is disabled');
  });
});

describe('/validate/pods', () => {
  const A = podClaim('claim-a', withUid('uid-a'));
  const B = podClaim('claim-b', withUid('uid-b'));

  it("lets a person remove a claim's label but never name a claim (no theft in two writes)", async () => {
    await allowed(PODS, {
      kind: 'Pod',
      user: ALICE,
      oldObject: poolPod('p', claimedBy(A)),
      object: poolPod('p', withState('Bound')),
    });
    const r = await denied(
      PODS,
      {
        kind: 'Pod',
        user: ALICE,
        oldObject: poolPod('p', withState('Bound')),
        object: poolPod('p', claimedBy(B)),
      },
      [`metadata.labels[${LABEL_CLAIMED_BY}]`, `metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`],
    );
    expect(r.status?.message).toContain('is set only by the claimkit controller, not by "alice"');
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', withState('Bound')),
      object: poolPod('p', claimedBy(B)),
    });
    // Not a pool pod: not ours to judge.
    await allowed(PODS, {
      kind: 'Pod',
      user: ALICE,
      object: pod('plain', withLabels({ [LABEL_CLAIMED_BY]: 'b' })),
    });
  });

  it('allows the pool lifecycle: create Idle, bind, drain, release, and a two-step handover', async () => {
    await allowed(PODS, { kind: 'Pod', user: CONTROLLER, object: poolPod('p', withState('Idle')) });
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', withState('Idle')),
      object: poolPod('p', claimedBy(A)),
    });
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', claimedBy(A)),
      object: poolPod('p', claimedBy(A), withState('Draining')),
    });
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', claimedBy(A), withState('Draining')),
      object: poolPod('p', withState('Idle')),
    });
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', claimedBy(A), withState('Draining')),
      object: poolPod('p', withState('Draining')),
    });
    const unlabelled = await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', claimedBy(A)),
      object: poolPod('p', withState('Bound')),
    });
    expect(unlabelled.warnings?.join()).toContain('Bound without');
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', withState('Bound')),
      object: poolPod('p', claimedBy(B)),
    });
  });

  it('ignores pods outside pools and writes that do not touch the claim keys', async () => {
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      object: pod('plain', withLabels({ [LABEL_STATE]: 'weird' })),
    });
    const broken = pod(
      'p',
      withLabels({ [LABEL_POOL]: 'web', [LABEL_STATE]: 'Idle', [LABEL_CLAIMED_BY]: 'x' }),
    );
    const touched = pod(
      'p',
      withLabels({ [LABEL_POOL]: 'web', [LABEL_STATE]: 'Idle', [LABEL_CLAIMED_BY]: 'x', team: 'a' }),
      withAnnotations({ note: 'y' }),
    );
    await allowed(PODS, { kind: 'Pod', user: CONTROLLER, oldObject: broken, object: touched });
  });

  it('denies a direct relabel from one claim to another', async () => {
    const r = await denied(
      PODS,
      {
        kind: 'Pod',
        user: CONTROLLER,
        oldObject: poolPod('p', claimedBy(A)),
        object: poolPod('p', claimedBy(B)),
      },
      [`metadata.labels[${LABEL_CLAIMED_BY}]`, `metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`],
    );
    expect(r.status?.message).toContain('claim-a -> claim-b');
    // The label alone, even on a pod that lost its pool label.
    await denied(
      PODS,
      {
        kind: 'Pod',
        user: CONTROLLER,
        oldObject: pod('p', withLabels({ [LABEL_CLAIMED_BY]: 'a' })),
        object: pod('p', withLabels({ [LABEL_CLAIMED_BY]: 'b' })),
      },
      [`metadata.labels[${LABEL_CLAIMED_BY}]`],
    );
    // Same name, another claim (recreated): the uid annotation may not be swapped either.
    await denied(
      PODS,
      {
        kind: 'Pod',
        user: CONTROLLER,
        oldObject: poolPod('p', claimedBy(A)),
        object: poolPod('p', claimedBy(podClaim('claim-a', withUid('uid-a2')))),
      },
      [`metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`],
    );
  });

  it('denies inconsistent state labels', async () => {
    await denied(PODS, { kind: 'Pod', user: CONTROLLER, object: poolPod('p') }, [
      `metadata.labels[${LABEL_STATE}]`,
    ]);
    await denied(
      PODS,
      {
        kind: 'Pod',
        user: CONTROLLER,
        oldObject: poolPod('p', withState('Idle')),
        object: poolPod('p', withState('Busy' as PodState)),
      },
      [`metadata.labels[${LABEL_STATE}]`],
    );
    await denied(
      PODS,
      {
        kind: 'Pod',
        user: CONTROLLER,
        oldObject: poolPod('p', claimedBy(A)),
        object: poolPod('p', claimedBy(A), withState('Idle')),
      },
      [`metadata.labels[${LABEL_CLAIMED_BY}]`],
    );
    await denied(
      PODS,
      { kind: 'Pod', user: CONTROLLER, object: poolPod('p', claimedBy(A), withState('Idle')) },
      [`metadata.labels[${LABEL_CLAIMED_BY}]`],
    );
  });

  it('denies a claimed-by label and uid annotation that disagree', async () => {
    const labelOnly = pod(
      'p',
      withLabels({ [LABEL_POOL]: 'web', [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: 'a' }),
    );
    await denied(
      PODS,
      { kind: 'Pod', user: CONTROLLER, oldObject: poolPod('p', withState('Idle')), object: labelOnly },
      [`metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`],
    );
    const uidOnly = pod(
      'p',
      withLabels({ [LABEL_POOL]: 'web', [LABEL_STATE]: 'Idle' }),
      withAnnotations({ [ANNOTATION_CLAIMED_BY_UID]: 'uid-a' }),
    );
    await denied(
      PODS,
      { kind: 'Pod', user: CONTROLLER, oldObject: poolPod('p', claimedBy(A)), object: uidOnly },
      [`metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`],
    );
  });
});

describe('podMetadata and lostPolicy (/validate/podclaims and /validate/podclaimsets)', () => {
  it("allows podMetadata of the user's own keys and both lost policies", async () => {
    const spec = {
      podMetadata: { labels: { team: 'a' }, annotations: { 'example.com/owner': 'alice' } },
      lostPolicy: 'Fail' as const,
    };
    await allowed(CLAIMS, { kind: 'PodClaim', object: podClaim('c1', withSpec(spec)) });
    await allowed(CLAIMS, { kind: 'PodClaim', object: podClaim('c1', withSpec({ lostPolicy: 'Rebind' })) });
    await allowed(SETS, {
      kind: 'PodClaimSet',
      object: webSet(
        withSpec({
          template: { metadata: { labels: { app: 'web' } }, spec: { poolName: 'web', ...spec } },
        }),
      ),
    });
  });

  it('denies claimkit.dev/ keys, disruption hints and an unknown lostPolicy, each with its path', async () => {
    const bad = {
      podMetadata: {
        labels: { [LABEL_STATE]: 'Idle', ok: 'x' },
        annotations: { [ANNOTATION_CLAIMED_BY_UID]: 'u', 'karpenter.sh/do-not-disrupt': 'false' },
      },
      lostPolicy: malformed<LostPolicy>('Sometimes'),
    };
    await denied(CLAIMS, { kind: 'PodClaim', object: podClaim('c1', withSpec(bad)) }, [
      `spec.podMetadata.labels[${LABEL_STATE}]`,
      `spec.podMetadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`,
      'spec.podMetadata.annotations[karpenter.sh/do-not-disrupt]',
      'spec.lostPolicy',
    ]);
    await denied(
      SETS,
      {
        kind: 'PodClaimSet',
        object: webSet(
          withSpec({
            template: {
              metadata: { labels: { app: 'web' } },
              spec: { poolName: 'web', podMetadata: { labels: malformed<Record<string, string>>('x') } },
            },
          }),
        ),
      },
      ['spec.template.spec.podMetadata.labels'],
    );
  });
});

describe('/validate/podclaimsets', () => {
  it('allows a set whose selector matches its template', async () => {
    await allowed(SETS, { kind: 'PodClaimSet', object: webSet() });
    await allowed(SETS, {
      kind: 'PodClaimSet',
      object: webSet(
        withSpec({
          selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'x'] }] },
        }),
      ),
    });
    await allowed(SETS, {
      kind: 'PodClaimSet',
      oldObject: webSet(),
      object: webSet(withSpec({ replicas: 0 })),
    });
  });

  it('denies a selector that does not match the template labels, or selects everything', async () => {
    await denied(
      SETS,
      { kind: 'PodClaimSet', object: webSet(withSpec({ selector: { matchLabels: { app: 'db' } } })) },
      ['spec.template.metadata.labels'],
    );
    await denied(SETS, { kind: 'PodClaimSet', object: webSet(withSpec({ selector: {} })) }, [
      'spec.selector',
    ]);
    await denied(
      SETS,
      {
        kind: 'PodClaimSet',
        object: webSet(
          withSpec({
            selector: {
              matchExpressions: [{ key: 'app', operator: malformed<'In'>('Near'), values: ['web'] }],
            },
          }),
        ),
      },
      ['spec.selector.matchExpressions[0].operator'],
    );
    await denied(
      SETS,
      {
        kind: 'PodClaimSet',
        object: webSet(
          withSpec({ selector: { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] } }),
        ),
      },
      ['spec.selector.matchExpressions[0].values'],
    );
  });

  it('denies a template poolName change and a negative replica count; warns on a selector change', async () => {
    const changed = webSet(
      withSpec({
        template: { metadata: { labels: { app: 'web' } }, spec: { poolName: 'db' } },
      }),
    );
    await denied(SETS, { kind: 'PodClaimSet', oldObject: webSet(), object: changed }, [
      'spec.template.spec.poolName',
    ]);
    await denied(SETS, { kind: 'PodClaimSet', object: webSet(withSpec({ replicas: -1 })) }, [
      'spec.replicas',
    ]);
    const r = await allowed(SETS, {
      kind: 'PodClaimSet',
      oldObject: webSet(),
      object: webSet(
        withSpec({
          selector: { matchLabels: { tier: 'a' } },
          template: { metadata: { labels: { tier: 'a' } }, spec: { poolName: 'web' } },
        }),
      ),
    });
    expect(r.warnings?.join()).toContain('spec.selector changed');
  });
});

describe('/validate/podpools', () => {
  it('allows a sound pool', async () => {
    await allowed(POOLS, { kind: 'PodPool', object: podPool('web') });
    await allowed(POOLS, { kind: 'PodPool', object: podPool('web', withSpec({ minIdle: 10, maxPods: 10 })) });
  });

  it('takes a shard pin (claimkit.dev/shard) from 0 to 255, and refuses any other value with its path', async () => {
    for (const pin of [0, 3, 255])
      await allowed(POOLS, { kind: 'PodPool', object: podPool('web', pinnedToShard(pin)) });
    for (const bad of ['-1', 'two', '256', '01', ''] as const) {
      const r = await denied(POOLS, { kind: 'PodPool', object: podPool('web', pinnedToShard(bad)) }, [
        `metadata.annotations[${ANNOTATION_SHARD}]`,
      ]);
      expect(r.status?.message, bad).toContain('from 0 to 255');
    }
  });

  it('denies minIdle > maxPods and other things the schema cannot say', async () => {
    const r = await denied(
      POOLS,
      { kind: 'PodPool', object: podPool('web', withSpec({ minIdle: 11, maxPods: 10 })) },
      ['spec.minIdle'],
    );
    expect(r.status?.message).toContain('11 > 10');
    await denied(POOLS, { kind: 'PodPool', object: podPool('web', withSpec({ drainSeconds: -5 })) }, [
      'spec.drainSeconds',
    ]);
    await denied(
      POOLS,
      {
        kind: 'PodPool',
        object: podPool(
          'web',
          withSpec({
            template: {
              metadata: {
                labels: { [LABEL_CLAIMED_BY]: 'x' },
                annotations: { [ANNOTATION_CLAIMED_BY_UID]: 'u' },
              },
              spec: { containers: [] },
            },
          }),
        ),
      },
      [
        `spec.template.metadata.labels[${LABEL_CLAIMED_BY}]`,
        `spec.template.metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`,
        'spec.template.spec.containers',
      ],
    );
  });

  it('allows a spec.source naming a Capture, and a container of the template', async () => {
    await allowed(POOLS, {
      kind: 'PodPool',
      object: podPool('web', withSpec({ source: { captureName: 'snap' } })),
    });
    await allowed(POOLS, {
      kind: 'PodPool',
      object: podPool('web', withSpec({ source: { captureName: 'snap.v1-a', container: 'main' } })),
    });
  });

  it('denies a bad spec.source with every error at its path', async () => {
    const r = await denied(
      POOLS,
      {
        kind: 'PodPool',
        object: podPool(
          'web',
          withSpec({
            source: { captureName: 'Not_A-Name', container: 'sidecar' },
            template: {
              metadata: { annotations: { [ANNOTATION_SOURCE_TOKEN]: '7', [ANNOTATION_SOURCE_REF]: 'x' } },
              spec: { containers: [{ name: 'main', image: 'nginx' }] },
            },
          }),
        ),
      },
      [
        'spec.source.captureName',
        'spec.source.container',
        `spec.template.metadata.annotations[${ANNOTATION_SOURCE_REF}]`,
        `spec.template.metadata.annotations[${ANNOTATION_SOURCE_TOKEN}]`,
      ],
    );
    expect(r.status?.message).toContain('lowercase RFC 1123 subdomain');
    expect(r.status?.message).toContain('must name a container of spec.template.spec.containers ("main")');
    await denied(
      POOLS,
      { kind: 'PodPool', object: podPool('web', withSpec({ source: malformed<PodPoolSource>({}) })) },
      ['spec.source.captureName'],
    );
    await denied(
      POOLS,
      { kind: 'PodPool', object: podPool('web', withSpec({ source: malformed<PodPoolSource>('snap') })) },
      ['spec.source'],
    );
    await denied(
      POOLS,
      { kind: 'PodPool', object: podPool('web', withSpec({ source: { captureName: 'a'.repeat(254) } })) },
      ['spec.source.captureName'],
    );
  });

  it('warns about template labels the controller overrides', async () => {
    const r = await allowed(POOLS, {
      kind: 'PodPool',
      object: podPool(
        'web',
        withSpec({
          template: {
            metadata: { labels: { [LABEL_STATE]: 'Bound', [LABEL_POOL]: 'other' } },
            spec: { containers: [{ name: 'main', image: 'nginx' }] },
          },
        }),
      ),
    });
    expect(r.warnings).toHaveLength(2);
  });
});
