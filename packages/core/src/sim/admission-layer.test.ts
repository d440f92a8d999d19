// The simulator's "admission on" layer refuses what a person with kubectl must not write, and
// lets every write core makes through: claim fields only from the controller, no A->B handover of a
// pool pod in one write, no claimed-by set by a person, and the Capture fencing rules.
import { describe, expect, it } from 'vitest';
import { ANNOTATION_CLAIMED_BY_UID, LABEL_CLAIMED_BY } from '../api/constants.ts';
import { ApiError } from '../api/errors.ts';
import { acquireCapture, completeCapture, failCapture } from '../capture/holder-ops.ts';
import { CONTROLLER_USER } from '../model/admission.ts';
import { ApiModel } from '../model/api-model.ts';
import { ManualClock } from '../model/clock.ts';
import {
  capture,
  claimedBy,
  forCreate,
  forPool,
  idle,
  inPool,
  pod,
  podClaim,
  refOf,
  withLabels,
  withSelector,
} from '../testing/fixtures.ts';
import { world as harness } from '../testing/world.ts';
import { type AdmissionMode, admissionLayer, type Refusal } from './admission-layer.ts';
import { KUBECTL_USER } from './kubectl-actor.ts';

const k = (name: string) => ({ namespace: 'default', name });

/** The shared test world with this layer in place of the CRD rules, and kubectl's client on it. */
function world(mode: AdmissionMode = 'on') {
  const refusals: Refusal[] = [];
  const { model: m } = harness({ layer: admissionLayer(mode, (r) => refusals.push(r)) });
  return { m, kubectl: m.as(KUBECTL_USER), refusals };
}

async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (e instanceof ApiError) return `${e.reason}: ${e.message}`;
    throw e;
  }
}

describe("PodClaim: the binding (status.podName, nodeName, podUID, sourcePod) is the controller's", () => {
  it('refuses them from a person, on create and on update; the controller writes them', async () => {
    const { m, kubectl } = world();
    expect(await outcome(kubectl.create(forCreate(podClaim('c', forPool('web')))))).toBe('ok');
    for (const status of [
      { podName: 'x' },
      { nodeName: 'n' },
      { podName: 'x', podUID: 'u' },
      { sourcePod: 'y' },
    ]) {
      expect(await outcome(kubectl.patchStatus('PodClaim', k('c'), { status }))).toMatch(
        /^Forbidden: podclaims.claimkit.dev "c" is forbidden: ValidatingAdmissionPolicy 'claimkit-podclaim-writers' with binding 'claimkit-podclaim-writers' denied request: status\.(podName|nodeName|podUID|sourcePod): is written only by the claimkit controller, not by "kubectl"$/,
      );
    }
    const made = forCreate(podClaim('d', forPool('web')));
    made.spec.podName = 'x';
    expect(await outcome(kubectl.create(made))).toMatch(
      /spec.podName: is written only by the claimkit controller/,
    );
    expect(
      await outcome(
        m.patchStatus('PodClaim', k('c'), { status: { podName: 'x', nodeName: 'n', podUID: 'u' } }),
      ),
    ).toBe('ok');
    // The binding's old place in spec is closed to the controller too (the CRD's CEL).
    expect(await outcome(m.patch('PodClaim', k('c'), { spec: { podName: 'x' } }))).toMatch(
      /spec.podName is no longer written: the binding is in status/,
    );
    // Other edits by a person (an annotation asking for a migration) go through.
    expect(
      await outcome(
        kubectl.patch('PodClaim', k('c'), { metadata: { annotations: { 'claimkit.dev/migrate': 'x' } } }),
      ),
    ).toBe('ok');
  });

  it('in mode off, lets them land and reports what mode on would have refused', async () => {
    const { kubectl, refusals } = world('off');
    await kubectl.create(forCreate(podClaim('c', forPool('web'))));
    expect(
      await outcome(kubectl.patchStatus('PodClaim', k('c'), { status: { podName: 'x', sourcePod: 'x' } })),
    ).toBe('ok');
    // The API server reports a policy's first failing validation only: one refusal per policy;
    // a webhook lists every violation in one denial: one refusal per webhook.
    expect(refusals.map((r) => [r.layer, r.message.split(':')[0]])).toEqual([
      ['crd', 'status.sourcePod'],
      ['policy', 'claimkit-podclaim-writers'],
      ['webhook', 'podclaims.webhook.claimkit.dev'],
    ]);
  });
});

describe("the webhook's rules: a pod another claim already holds", () => {
  // Neither the CRD nor a policy can see other objects: only the webhook refuses a claim naming a
  // pod another claim references, even when the controller writes it.
  async function twoClaims(m: ApiModel) {
    await m.create(forCreate(podClaim('c', forPool('web'))));
    await m.create(forCreate(podClaim('d', forPool('web'))));
    await m.patchStatus('PodClaim', k('c'), { status: { podName: 'x' } });
  }

  it('in mode on, refuses it as the API server answers a webhook denial', async () => {
    const { m, refusals } = world();
    await twoClaims(m);
    expect(refusals).toEqual([]);
    expect(await outcome(m.patchStatus('PodClaim', k('d'), { status: { podName: 'x' } }))).toBe(
      'Forbidden: admission webhook "podclaims.webhook.claimkit.dev" denied the request: claimkit: PodClaim "d" denied: status.podName: pod "x" is already referenced by claim "c"',
    );
    expect(refusals.map((r) => [r.layer, r.kind, r.user])).toEqual([
      ['webhook', 'PodClaim', CONTROLLER_USER.username],
    ]);
    expect(m.getNow('PodClaim', k('d')).status?.podName).toBeUndefined();
    // Another pod is fine; so is the pod once c lets go of it.
    expect(await outcome(m.patchStatus('PodClaim', k('d'), { status: { podName: 'y' } }))).toBe('ok');
    await m.patchStatus('PodClaim', k('c'), { status: { podName: null } });
    expect(await outcome(m.patchStatus('PodClaim', k('d'), { status: { podName: 'x' } }))).toBe('ok');
  });

  it('in mode off, lets it land and counts it as the webhook layer only', async () => {
    const { m, refusals } = world('off');
    await twoClaims(m);
    expect(await outcome(m.patchStatus('PodClaim', k('d'), { status: { podName: 'x' } }))).toBe('ok');
    expect(m.getNow('PodClaim', k('d')).status?.podName).toBe('x');
    expect(refusals).toEqual([
      {
        layer: 'webhook',
        kind: 'PodClaim',
        user: CONTROLLER_USER.username,
        message: 'podclaims.webhook.claimkit.dev: status.podName: pod "x" is already referenced by claim "c"',
      },
    ]);
  });

  it('without the webhook layer, nothing refuses it', async () => {
    const refusals: Refusal[] = [];
    const m = new ApiModel({
      ...admissionLayer('on', (r) => refusals.push(r), ['policy']),
      clock: new ManualClock(),
    });
    await twoClaims(m);
    expect(await outcome(m.patchStatus('PodClaim', k('d'), { status: { podName: 'x' } }))).toBe('ok');
    expect(refusals).toEqual([]);
  });
});

describe('pool pods: claimed-by', () => {
  async function podLabelledA(m: ApiModel) {
    await m.create(forCreate(pod('p', inPool('web'), claimedBy('a'))));
  }
  const toB = {
    metadata: { labels: { [LABEL_CLAIMED_BY]: 'b' }, annotations: { [ANNOTATION_CLAIMED_BY_UID]: 'uid-b' } },
  };
  const unlabel = {
    metadata: { labels: { [LABEL_CLAIMED_BY]: null }, annotations: { [ANNOTATION_CLAIMED_BY_UID]: null } },
  };

  it('never changes from one claim to another in one write, whoever writes', async () => {
    const { m, kubectl } = world();
    await podLabelledA(m);
    expect(await outcome(m.patch('Pod', k('p'), toB))).toMatch(
      /^Forbidden: pods "p" is forbidden: .*metadata.labels\[claimkit.dev\/claimed-by\]: a pod is never relabelled from one claim to another in a single write \(a -> b\)/,
    );
    expect(await outcome(kubectl.patch('Pod', k('p'), toB))).toMatch(
      /never relabelled from one claim to another/,
    );
    const annotationOnly = { metadata: { annotations: { [ANNOTATION_CLAIMED_BY_UID]: 'uid-b' } } };
    expect(await outcome(m.patch('Pod', k('p'), annotationOnly))).toMatch(
      /metadata.annotations\[claimkit.dev\/claimed-by-uid\]: a pod is never handed from one claim to another/,
    );
  });

  it("the webhook's rule alone refuses it too (P1 stated once, in claim-handover.ts), listing both keys", async () => {
    const m = new ApiModel({ ...admissionLayer('on', () => {}, ['webhook']), clock: new ManualClock() });
    await podLabelledA(m);
    const e = await m.patch('Pod', k('p'), toB).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    const err = e as ApiError;
    expect([err.reason, err.code]).toEqual(['Forbidden', 403]);
    const uidA = m.getNow('Pod', k('p')).metadata.annotations?.[ANNOTATION_CLAIMED_BY_UID];
    expect(err.message).toBe(
      `admission webhook "pods.webhook.claimkit.dev" denied the request: claimkit: Pod "p" denied: metadata.labels[claimkit.dev/claimed-by]: a pod is never relabelled from one claim to another in a single write (a -> b); the label must be removed first; metadata.annotations[claimkit.dev/claimed-by-uid]: a pod is never handed from one claim to another in a single write (uid ${uidA} -> uid-b); the annotation must be removed first`,
    );
    expect(err.causes.map((c) => c.field)).toEqual([
      `metadata.labels[${LABEL_CLAIMED_BY}]`,
      `metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]`,
    ]);
  });

  it('a person may remove it, never set it; the controller removes and sets it in two writes', async () => {
    const { m, kubectl } = world();
    await podLabelledA(m);
    expect(await outcome(kubectl.patch('Pod', k('p'), unlabel))).toBe('ok');
    expect(await outcome(kubectl.patch('Pod', k('p'), toB))).toMatch(
      /is set only by the claimkit controller, not by "kubectl"/,
    );
    expect(await outcome(m.patch('Pod', k('p'), toB))).toBe('ok');
    // Pods outside a pool are not the policy's business.
    await m.create(forCreate(pod('other', claimedBy('a'))));
    expect(await outcome(kubectl.patch('Pod', k('other'), toB))).toBe('ok');
    await m.create(forCreate(pod('idle', inPool('web'), idle())));
    expect(await outcome(kubectl.patch('Pod', k('idle'), { metadata: { labels: { x: 'y' } } }))).toBe('ok');
  });
});

describe('Capture status: the fencing rules', () => {
  async function setup() {
    const w = world();
    const { m } = w;
    await m.create(forCreate(capture('cap', withSelector({ app: 'worker' }))));
    for (const name of ['w1', 'w2']) {
      await m.create(forCreate(pod(name, withLabels({ app: 'worker' }))));
    }
    for (const name of ['w1', 'w2']) {
      m.setPodStatusNow(k(name), { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
    }
    return w;
  }
  const ref = (m: ApiModel, name: string) => refOf(m.getNow('Pod', k(name)));

  it("core's acquire, fail and fenced complete pass, as a holder pod's identity", async () => {
    const { m } = await setup();
    const holder = m.as({ username: 'system:serviceaccount:default:worker' });
    const now = () => m.clock.now();
    await acquireCapture(holder, k('cap'), ref(m, 'w1'), now);
    await failCapture(holder, k('cap'), 1, 'boom');
    await acquireCapture(holder, k('cap'), ref(m, 'w2'), now);
    await completeCapture(holder, k('cap'), 2, 'snap-2', now);
    expect(m.getNow('Capture', k('cap')).status).toMatchObject({
      phase: 'Captured',
      epoch: 2,
      result: { token: 2 },
    });
  });

  it('refuses an epoch that goes down or moves without a new claim, and a stale or unclosed result', async () => {
    const { m, kubectl } = await setup();
    const now = () => m.clock.now();
    await acquireCapture(m, k('cap'), ref(m, 'w1'), now);
    await failCapture(m, k('cap'), 1, 'boom');
    await acquireCapture(m, k('cap'), ref(m, 'w2'), now);
    const patch = (status: object) => outcome(kubectl.patchStatus('Capture', k('cap'), { status }));
    expect(await patch({ epoch: 1 })).toMatch(
      /^Invalid: Capture "cap" is invalid: status.epoch: .*epoch never decreases/,
    );
    expect(await patch({ epoch: 5 })).toMatch(
      /the epoch changes only with a new claim whose token is the new epoch/,
    );
    const result = (token: number) => ({
      ref: 'r',
      token,
      capturedFrom: { name: 'w2', uid: 'u' },
      completionTime: '2026-01-01T00:00:00Z',
    });
    expect(await patch({ phase: 'Captured', result: result(1), claim: null })).toMatch(
      /status.result.token: .*no result without the current claim token/,
    );
    expect(await patch({ phase: 'Captured', result: result(2) })).toMatch(/status.result.token/);
    const c = m.getNow('Capture', k('cap'));
    expect([c.status?.epoch, c.status?.claim?.token, c.status?.result]).toEqual([2, 2, undefined]);
    // The holder's own fenced completion closes the claim with its token.
    expect(await patch({ phase: 'Captured', result: result(2), claim: null })).toBe('ok');
  });
});
