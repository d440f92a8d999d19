import {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_SOURCE_REF,
  ANNOTATION_SOURCE_TOKEN,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
} from '@claimkit/core';
import { MemoryPodClaimIndex } from '@claimkit/core/admission';
import { describe, expect, it } from 'vitest';
import {
  ALICE,
  CONTROLLER,
  capture,
  claimStatus,
  pod,
  podClaim,
  podClaimSet,
  podPool,
  poolPod,
  post,
  result,
  reviewFor,
  testApp,
} from './testing/review.ts';

type Opts = Parameters<typeof reviewFor>[0];

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
    const ok = await post(app, CAP, reviewFor({ kind: 'Capture', object: capture(), uid: 'abc-123' }));
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
        oldObject: capture({ epoch: 3 }),
        object: capture({ epoch: 2 }),
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
    const big = reviewFor({ kind: 'Pod', object: pod('p', { x: 'y'.repeat(2000) }) });
    expect((await post(app, PODS, big)).status).toBe(400);
  });

  it('allows DELETE and CONNECT without looking at the objects', async () => {
    await allowed(CLAIMS, {
      kind: 'PodClaim',
      operation: 'DELETE',
      oldObject: podClaim('c', { podName: 'p' }),
    });
    await allowed(PODS, { kind: 'Pod', operation: 'DELETE', oldObject: poolPod('p', 'Bound') });
    await allowed(PODS, { kind: 'Pod', operation: 'CONNECT', object: { kind: 'PodExecOptions' } });
  });

  it('serves /healthz, /readyz and /metrics', async () => {
    const index = new MemoryPodClaimIndex();
    const { app } = testApp({ index });
    expect((await app.request('/healthz')).status).toBe(200);
    expect((await app.request('/readyz')).status).toBe(503);
    index.markSynced();
    expect((await app.request('/readyz')).status).toBe(200);
    await post(app, PODS, reviewFor({ kind: 'Pod', object: poolPod('p', 'Idle') }));
    await post(app, PODS, reviewFor({ kind: 'Pod', object: poolPod('p', 'Nope') }));
    await post(app, PODS, 'garbage');
    const res = await app.request('/metrics');
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('claimkit_webhook_requests_total{path="/validate/pods",result="allowed"} 1');
    expect(text).toContain('claimkit_webhook_requests_total{path="/validate/pods",result="denied"} 1');
    expect(text).toContain('claimkit_webhook_requests_total{path="/validate/pods",result="bad_request"} 1');
    expect(text).toContain('claimkit_webhook_request_duration_seconds_count{path="/validate/pods"} 3');
    expect(text).toContain(
      'claimkit_webhook_request_duration_seconds_bucket{path="/validate/pods",le="+Inf"} 3',
    );
    expect(text).toContain(
      `claimkit_webhook_violations_total{field="metadata.labels[${LABEL_STATE}]",path="/validate/pods"} 1`,
    );
  });
});

describe('/validate/captures', () => {
  const upd = (o: Record<string, unknown>, n: Record<string, unknown>, user = CONTROLLER): Opts => ({
    kind: 'Capture',
    oldObject: capture(o),
    object: capture(n),
    user,
    subResource: 'status',
  });

  it('allows creation, a first claim, renewals, a takeover with a higher token and a fenced result', async () => {
    await allowed(CAP, { kind: 'Capture', object: capture() });
    await allowed(CAP, upd({}, { phase: 'Capturing', epoch: 1, claim: claimStatus('pod-a', 1) }));
    const held = { phase: 'Capturing', epoch: 3, claim: claimStatus('pod-a', 3) };
    await allowed(
      CAP,
      upd(held, { ...held, claim: { ...claimStatus('pod-a', 3), renewTime: '2026-01-01T00:05:00Z' } }),
    );
    await allowed(CAP, upd(held, { ...held, claim: { ...claimStatus('pod-a', 3), job: { id: 'j1' } } }));
    await allowed(CAP, upd(held, { ...held, epoch: 4, claim: claimStatus('pod-b', 4) }));
    await allowed(CAP, upd(held, { ...held, epoch: 4, claim: claimStatus('pod-a', 4) })); // re-acquire
    // The holder closes its claim and writes the result with its token, in one write (any user).
    await allowed(CAP, upd(held, { phase: 'Captured', epoch: 3, result: result(3) }, ALICE));
    const done = { phase: 'Captured', epoch: 3, result: result(3) };
    await allowed(CAP, upd(done, { ...done, attempts: 1 })); // unchanged result
    await allowed(CAP, upd(done, { ...done, epoch: 4, claim: claimStatus('pod-c', 4) }));
    await allowed(CAP, upd(held, { phase: 'Failed', epoch: 3, lastError: 'boom' }));
  });

  it('denies a spec whose selector would make every pod in the namespace a candidate', async () => {
    const withSelector = (selector: unknown, status: Record<string, unknown> = {}) => {
      const c = capture(status) as { spec: Record<string, unknown> };
      c.spec.selector = selector;
      return c;
    };
    for (const sel of [{}, { matchLabels: {} }, { matchLabels: {}, matchExpressions: [] }]) {
      const r = await denied(CAP, { kind: 'Capture', object: withSelector(sel) }, ['spec.selector']);
      expect(r.status?.message).toContain('every pod in the namespace');
    }
    await denied(
      CAP,
      { kind: 'Capture', oldObject: capture(), object: withSelector({}), operation: 'UPDATE' },
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
    const held = { epoch: 5, claim: claimStatus('pod-a', 5) };
    const r = await denied(CAP, upd(held, { epoch: 5, claim: claimStatus('pod-b', 5) }), [
      'status.claim.holder',
    ]);
    expect(r.status?.message).toContain('a new holder needs a higher token');
    await denied(
      CAP,
      upd({ epoch: 5, claim: claimStatus('pod-a', 3) }, { epoch: 5, claim: claimStatus('pod-b', 4) }),
      ['status.claim.token'],
    );
    await denied(CAP, upd(held, { epoch: 7, claim: claimStatus('pod-b', 6) }), ['status.claim.token']);
    await denied(CAP, upd(held, { epoch: 5, claim: claimStatus('pod-b', 6) }), ['status.claim.token']);
    await denied(CAP, upd({}, { epoch: 1, claim: { token: 1 } }), [
      'status.claim.holder.name',
      'status.claim.holder.uid',
    ]);
    await denied(CAP, upd({}, { epoch: 1, claim: { ...claimStatus('pod-a', 1), token: 'one' } }), [
      'status.claim.token',
    ]);
  });

  it('denies a result without the current claim token', async () => {
    const held = { phase: 'Capturing', epoch: 5, claim: claimStatus('pod-b', 5) };
    const stale = await denied(CAP, upd(held, { phase: 'Captured', epoch: 5, result: result(4) }, ALICE), [
      'status.result.token',
    ]);
    expect(stale.status?.message).toContain('no result without the current claim token');
    await denied(CAP, upd({ epoch: 5 }, { epoch: 5, result: result(5) }), ['status.result.token']);
    await denied(CAP, upd(held, { epoch: 5, result: { ...result(5), token: undefined } }), [
      'status.result.token',
    ]);
    await denied(CAP, upd(held, { epoch: 6, claim: claimStatus('pod-c', 6), result: result(5) }), [
      'status.result.token',
    ]);
    await denied(CAP, upd(held, { phase: 'Captured', epoch: 5, result: { ...result(5), ref: '' } }), [
      'status.result.ref',
    ]);
    // The right token, but the claim stays open: what detection would call an unfenced result.
    const open = await denied(CAP, upd(held, { ...held, result: result(5) }), ['status.claim']);
    expect(open.status?.message).toContain('written only by the write that closes its claim');
    await denied(CAP, { kind: 'Capture', object: capture({ epoch: 1, result: result(1) }) }, [
      'status.result.token',
    ]);
  });

  it('lists every violation of one write', async () => {
    const held = { epoch: 5, claim: claimStatus('pod-b', 5) };
    const r = await denied(CAP, upd(held, { epoch: 4, claim: claimStatus('pod-c', 5), result: result(3) }), [
      'status.epoch',
      'status.claim.token',
      'status.result.token',
    ]);
    expect(r.status?.details).toMatchObject({ kind: 'Capture', group: 'claimkit.dev', name: 'cap' });
  });

  it('warns when a durable result is removed', async () => {
    const done = { phase: 'Captured', epoch: 3, result: result(3) };
    const r = await allowed(CAP, upd(done, { phase: 'Pending', epoch: 3 }));
    expect(r.warnings?.join()).toContain('status.result is removed');
  });
});

describe('/validate/podclaims', () => {
  it('allows users to create and annotate claims, and the controller to bind and migrate', async () => {
    await allowed(CLAIMS, { kind: 'PodClaim', object: podClaim('c1', {}) });
    await allowed(CLAIMS, {
      kind: 'PodClaim',
      oldObject: podClaim('c1', { podName: 'p1' }),
      object: podClaim('c1', { podName: 'p1' }, { annotations: { 'claimkit.dev/migrate': 'drain' } }),
    });
    await allowed(CLAIMS, {
      kind: 'PodClaim',
      user: CONTROLLER,
      oldObject: podClaim('c1', {}),
      object: podClaim('c1', { podName: 'p1', nodeName: 'n1' }),
    });
    const { app, index } = testApp();
    index.upsert(podClaim('c1', { podName: 'p1' }));
    await allowed(
      CLAIMS,
      {
        kind: 'PodClaim',
        user: CONTROLLER,
        oldObject: podClaim('c1', { podName: 'p1', nodeName: 'n1' }),
        object: podClaim('c1', { podName: 'p2', sourcePod: 'p1', nodeName: 'n2' }),
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
        user: { username: 'bot', groups: ['claimkit:controllers'] },
        oldObject: podClaim('c1', {}),
        object: podClaim('c1', { podName: 'p1' }),
      },
      app,
    );
    await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        user: CONTROLLER,
        oldObject: podClaim('c1', {}),
        object: podClaim('c1', { podName: 'p1' }),
      },
      ['spec.podName'],
      app,
    );
  });

  it('denies a poolName change', async () => {
    await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        user: CONTROLLER,
        oldObject: podClaim('c1', {}),
        object: podClaim('c1', { poolName: 'db' }),
      },
      ['spec.poolName'],
    );
    await denied(CLAIMS, { kind: 'PodClaim', object: podClaim('c1', { poolName: '' }) }, ['spec.poolName']);
  });

  it('denies sourcePod == podName', async () => {
    await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        user: CONTROLLER,
        oldObject: podClaim('c1', { podName: 'p1' }),
        object: podClaim('c1', { podName: 'p1', sourcePod: 'p1' }),
      },
      ['spec.sourcePod'],
    );
  });

  it('denies podName, nodeName and sourcePod written by anyone but the controller', async () => {
    const r = await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        user: ALICE,
        oldObject: podClaim('c1', { podName: 'p1', nodeName: 'n1' }),
        object: podClaim('c1', { podName: 'p2', nodeName: 'n2', sourcePod: 'p1' }),
      },
      ['spec.podName', 'spec.nodeName', 'spec.sourcePod'],
    );
    expect(r.status?.message).toContain('"alice"');
    await denied(CLAIMS, { kind: 'PodClaim', user: ALICE, object: podClaim('c1', { podName: 'p1' }) }, [
      'spec.podName',
    ]);
    await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        user: ALICE,
        oldObject: podClaim('c1', { podName: 'p1' }),
        object: podClaim('c1', {}),
      },
      ['spec.podName'],
    );
  });

  it('denies a pod already referenced by another claim (podName or sourcePod)', async () => {
    const { app, index } = testApp();
    index.upsert(podClaim('other', { podName: 'p1' }));
    index.upsert(podClaim('mover', { podName: 'p3', sourcePod: 'p2' }));
    const r = await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        user: CONTROLLER,
        oldObject: podClaim('c1', {}),
        object: podClaim('c1', { podName: 'p1' }),
      },
      ['spec.podName'],
      app,
    );
    expect(r.status?.message).toContain('already referenced by claim "other"');
    await denied(
      CLAIMS,
      {
        kind: 'PodClaim',
        user: CONTROLLER,
        oldObject: podClaim('c1', {}),
        object: podClaim('c1', { podName: 'p2' }),
      },
      ['spec.podName'],
      app,
    );
    // A claim in another namespace does not count; nor does a deleting claim (its finalizer is releasing).
    index.upsert(podClaim('elsewhere', { podName: 'p9' }, { namespace: 'other-ns' }));
    index.upsert(podClaim('going', { podName: 'p8' }, { deletionTimestamp: '2026-01-01T00:00:00Z' }));
    for (const p of ['p9', 'p8']) {
      await allowed(
        CLAIMS,
        {
          kind: 'PodClaim',
          user: CONTROLLER,
          oldObject: podClaim('c1', {}),
          object: podClaim('c1', { podName: p }),
        },
        app,
      );
    }
    // Once the other claim lets go, the pod can be taken.
    index.upsert(podClaim('other', {}));
    await allowed(
      CLAIMS,
      {
        kind: 'PodClaim',
        user: CONTROLLER,
        oldObject: podClaim('c1', {}),
        object: podClaim('c1', { podName: 'p1' }),
      },
      app,
    );
    // An unchanged podName is not re-checked (a finalizer's write must always go through).
    index.upsert(podClaim('dup', { podName: 'p5' }));
    await allowed(
      CLAIMS,
      {
        kind: 'PodClaim',
        user: ALICE,
        oldObject: podClaim('c1', { podName: 'p5' }),
        object: podClaim('c1', { podName: 'p5' }, { finalizers: [] }),
      },
      app,
    );
  });

  it('denies reference changes until the index has synced; warns when it is disabled', async () => {
    const upd: Opts = {
      kind: 'PodClaim',
      user: CONTROLLER,
      oldObject: podClaim('c1', {}),
      object: podClaim('c1', { podName: 'p1' }),
    };
    const r = await denied(CLAIMS, upd, ['spec.podName'], testApp({ index: new MemoryPodClaimIndex() }).app);
    expect(r.status?.message).toContain('not synced');
    const off = testApp({ index: new MemoryPodClaimIndex({ enabled: false, synced: true }) }).app;
    const ok = await allowed(CLAIMS, upd, off);
    expect(ok.warnings?.join()).toContain('claim index is disabled');
  });
});

describe('/validate/pods', () => {
  const A = { name: 'claim-a', uid: 'uid-a' };
  const B = { name: 'claim-b', uid: 'uid-b' };

  it("lets a person remove a claim's label but never name a claim (no theft in two writes)", async () => {
    await allowed(PODS, {
      kind: 'Pod',
      user: ALICE,
      oldObject: poolPod('p', 'Bound', A),
      object: poolPod('p', 'Bound'),
    });
    const r = await denied(
      PODS,
      { kind: 'Pod', user: ALICE, oldObject: poolPod('p', 'Bound'), object: poolPod('p', 'Bound', B) },
      [`metadata.labels[${LABEL_CLAIMED_BY}]`, `metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`],
    );
    expect(r.status?.message).toContain('is set only by the claimkit controller, not by "alice"');
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', 'Bound'),
      object: poolPod('p', 'Bound', B),
    });
    // Not a pool pod: not ours to judge.
    await allowed(PODS, { kind: 'Pod', user: ALICE, object: pod('plain', { [LABEL_CLAIMED_BY]: 'b' }) });
  });

  it('allows the pool lifecycle: create Idle, bind, drain, release, and a two-step handover', async () => {
    await allowed(PODS, { kind: 'Pod', user: CONTROLLER, object: poolPod('p', 'Idle') });
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', 'Idle'),
      object: poolPod('p', 'Bound', A),
    });
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', 'Bound', A),
      object: poolPod('p', 'Draining', A),
    });
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', 'Draining', A),
      object: poolPod('p', 'Idle'),
    });
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', 'Draining', A),
      object: poolPod('p', 'Draining'),
    });
    const unlabelled = await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', 'Bound', A),
      object: poolPod('p', 'Bound'),
    });
    expect(unlabelled.warnings?.join()).toContain('Bound without');
    await allowed(PODS, {
      kind: 'Pod',
      user: CONTROLLER,
      oldObject: poolPod('p', 'Bound'),
      object: poolPod('p', 'Bound', B),
    });
  });

  it('ignores pods outside pools and writes that do not touch the claim keys', async () => {
    await allowed(PODS, { kind: 'Pod', user: CONTROLLER, object: pod('plain', { [LABEL_STATE]: 'weird' }) });
    const broken = pod('p', { [LABEL_POOL]: 'web', [LABEL_STATE]: 'Idle', [LABEL_CLAIMED_BY]: 'x' });
    const touched = pod(
      'p',
      { [LABEL_POOL]: 'web', [LABEL_STATE]: 'Idle', [LABEL_CLAIMED_BY]: 'x', team: 'a' },
      { note: 'y' },
    );
    await allowed(PODS, { kind: 'Pod', user: CONTROLLER, oldObject: broken, object: touched });
  });

  it('denies a direct relabel from one claim to another', async () => {
    const r = await denied(
      PODS,
      {
        kind: 'Pod',
        user: CONTROLLER,
        oldObject: poolPod('p', 'Bound', A),
        object: poolPod('p', 'Bound', B),
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
        oldObject: pod('p', { [LABEL_CLAIMED_BY]: 'a' }),
        object: pod('p', { [LABEL_CLAIMED_BY]: 'b' }),
      },
      [`metadata.labels[${LABEL_CLAIMED_BY}]`],
    );
    // Same name, another claim (recreated): the uid annotation may not be swapped either.
    await denied(
      PODS,
      {
        kind: 'Pod',
        user: CONTROLLER,
        oldObject: poolPod('p', 'Bound', A),
        object: poolPod('p', 'Bound', { ...A, uid: 'uid-a2' }),
      },
      [`metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`],
    );
  });

  it('denies inconsistent state labels', async () => {
    await denied(PODS, { kind: 'Pod', user: CONTROLLER, object: poolPod('p', undefined) }, [
      `metadata.labels[${LABEL_STATE}]`,
    ]);
    await denied(
      PODS,
      { kind: 'Pod', user: CONTROLLER, oldObject: poolPod('p', 'Idle'), object: poolPod('p', 'Busy') },
      [`metadata.labels[${LABEL_STATE}]`],
    );
    await denied(
      PODS,
      { kind: 'Pod', user: CONTROLLER, oldObject: poolPod('p', 'Bound', A), object: poolPod('p', 'Idle', A) },
      [`metadata.labels[${LABEL_CLAIMED_BY}]`],
    );
    await denied(PODS, { kind: 'Pod', user: CONTROLLER, object: poolPod('p', 'Idle', A) }, [
      `metadata.labels[${LABEL_CLAIMED_BY}]`,
    ]);
  });

  it('denies a claimed-by label and uid annotation that disagree', async () => {
    const labelOnly = pod('p', { [LABEL_POOL]: 'web', [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: 'a' });
    await denied(
      PODS,
      { kind: 'Pod', user: CONTROLLER, oldObject: poolPod('p', 'Idle'), object: labelOnly },
      [`metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`],
    );
    const uidOnly = pod(
      'p',
      { [LABEL_POOL]: 'web', [LABEL_STATE]: 'Idle' },
      { [ANNOTATION_CLAIMED_BY_UID]: 'uid-a' },
    );
    await denied(
      PODS,
      { kind: 'Pod', user: CONTROLLER, oldObject: poolPod('p', 'Bound', A), object: uidOnly },
      [`metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`],
    );
  });
});

describe('podMetadata and lostPolicy (/validate/podclaims and /validate/podclaimsets)', () => {
  it("allows podMetadata of the user's own keys and both lost policies", async () => {
    const spec = {
      podMetadata: { labels: { team: 'a' }, annotations: { 'example.com/owner': 'alice' } },
      lostPolicy: 'Fail',
    };
    await allowed(CLAIMS, { kind: 'PodClaim', object: podClaim('c1', spec) });
    await allowed(CLAIMS, { kind: 'PodClaim', object: podClaim('c1', { lostPolicy: 'Rebind' }) });
    await allowed(SETS, {
      kind: 'PodClaimSet',
      object: podClaimSet({
        template: { metadata: { labels: { app: 'web' } }, spec: { poolName: 'web', ...spec } },
      }),
    });
  });

  it('denies claimkit.dev/ keys, disruption hints and an unknown lostPolicy, each with its path', async () => {
    const bad = {
      podMetadata: {
        labels: { [LABEL_STATE]: 'Idle', ok: 'x' },
        annotations: { [ANNOTATION_CLAIMED_BY_UID]: 'u', 'karpenter.sh/do-not-disrupt': 'false' },
      },
      lostPolicy: 'Sometimes',
    };
    await denied(CLAIMS, { kind: 'PodClaim', object: podClaim('c1', bad) }, [
      `spec.podMetadata.labels[${LABEL_STATE}]`,
      `spec.podMetadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`,
      'spec.podMetadata.annotations[karpenter.sh/do-not-disrupt]',
      'spec.lostPolicy',
    ]);
    await denied(
      SETS,
      {
        kind: 'PodClaimSet',
        object: podClaimSet({
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { poolName: 'web', podMetadata: { labels: 'x' } },
          },
        }),
      },
      ['spec.template.spec.podMetadata.labels'],
    );
  });
});

describe('/validate/podclaimsets', () => {
  it('allows a set whose selector matches its template', async () => {
    await allowed(SETS, { kind: 'PodClaimSet', object: podClaimSet({}) });
    await allowed(SETS, {
      kind: 'PodClaimSet',
      object: podClaimSet({
        selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'x'] }] },
      }),
    });
    await allowed(SETS, {
      kind: 'PodClaimSet',
      oldObject: podClaimSet({}),
      object: podClaimSet({ replicas: 0 }),
    });
  });

  it('denies a selector that does not match the template labels, or selects everything', async () => {
    await denied(
      SETS,
      { kind: 'PodClaimSet', object: podClaimSet({ selector: { matchLabels: { app: 'db' } } }) },
      ['spec.template.metadata.labels'],
    );
    await denied(SETS, { kind: 'PodClaimSet', object: podClaimSet({ selector: {} }) }, ['spec.selector']);
    await denied(
      SETS,
      {
        kind: 'PodClaimSet',
        object: podClaimSet({
          selector: { matchExpressions: [{ key: 'app', operator: 'Near', values: ['web'] }] },
        }),
      },
      ['spec.selector.matchExpressions[0].operator'],
    );
    await denied(
      SETS,
      {
        kind: 'PodClaimSet',
        object: podClaimSet({ selector: { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] } }),
      },
      ['spec.selector.matchExpressions[0].values'],
    );
  });

  it('denies a template poolName change and a negative replica count; warns on a selector change', async () => {
    const changed = podClaimSet({
      template: { metadata: { labels: { app: 'web' } }, spec: { poolName: 'db' } },
    });
    await denied(SETS, { kind: 'PodClaimSet', oldObject: podClaimSet({}), object: changed }, [
      'spec.template.spec.poolName',
    ]);
    await denied(SETS, { kind: 'PodClaimSet', object: podClaimSet({ replicas: -1 }) }, ['spec.replicas']);
    const r = await allowed(SETS, {
      kind: 'PodClaimSet',
      oldObject: podClaimSet({}),
      object: podClaimSet({
        selector: { matchLabels: { tier: 'a' } },
        template: { metadata: { labels: { tier: 'a' } }, spec: { poolName: 'web' } },
      }),
    });
    expect(r.warnings?.join()).toContain('spec.selector changed');
  });
});

describe('/validate/podpools', () => {
  it('allows a sound pool', async () => {
    await allowed(POOLS, { kind: 'PodPool', object: podPool({}) });
    await allowed(POOLS, { kind: 'PodPool', object: podPool({ minIdle: 10, maxPods: 10 }) });
  });

  it('denies minIdle > maxPods and other things the schema cannot say', async () => {
    const r = await denied(POOLS, { kind: 'PodPool', object: podPool({ minIdle: 11, maxPods: 10 }) }, [
      'spec.minIdle',
    ]);
    expect(r.status?.message).toContain('11 > 10');
    await denied(POOLS, { kind: 'PodPool', object: podPool({ drainSeconds: -5 }) }, ['spec.drainSeconds']);
    await denied(
      POOLS,
      {
        kind: 'PodPool',
        object: podPool({
          template: {
            metadata: {
              labels: { [LABEL_CLAIMED_BY]: 'x' },
              annotations: { [ANNOTATION_CLAIMED_BY_UID]: 'u' },
            },
            spec: { containers: [] },
          },
        }),
      },
      [
        `spec.template.metadata.labels[${LABEL_CLAIMED_BY}]`,
        `spec.template.metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`,
        'spec.template.spec.containers',
      ],
    );
  });

  it('allows a spec.source naming a Capture, and a container of the template', async () => {
    await allowed(POOLS, { kind: 'PodPool', object: podPool({ source: { captureName: 'snap' } }) });
    await allowed(POOLS, {
      kind: 'PodPool',
      object: podPool({ source: { captureName: 'snap.v1-a', container: 'main' } }),
    });
  });

  it('denies a bad spec.source with every error at its path', async () => {
    const r = await denied(
      POOLS,
      {
        kind: 'PodPool',
        object: podPool({
          source: { captureName: 'Not_A-Name', container: 'sidecar' },
          template: {
            metadata: { annotations: { [ANNOTATION_SOURCE_TOKEN]: '7', [ANNOTATION_SOURCE_REF]: 'x' } },
            spec: { containers: [{ name: 'main', image: 'nginx' }] },
          },
        }),
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
    await denied(POOLS, { kind: 'PodPool', object: podPool({ source: {} }) }, ['spec.source.captureName']);
    await denied(POOLS, { kind: 'PodPool', object: podPool({ source: 'snap' }) }, ['spec.source']);
    await denied(POOLS, { kind: 'PodPool', object: podPool({ source: { captureName: 'a'.repeat(254) } }) }, [
      'spec.source.captureName',
    ]);
  });

  it('warns about template labels the controller overrides', async () => {
    const r = await allowed(POOLS, {
      kind: 'PodPool',
      object: podPool({
        template: {
          metadata: { labels: { [LABEL_STATE]: 'Bound', [LABEL_POOL]: 'other' } },
          spec: { containers: [{ name: 'main', image: 'nginx' }] },
        },
      }),
    });
    expect(r.warnings).toHaveLength(2);
  });
});
