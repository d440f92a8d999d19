// Conformance cases for the CRDs' CEL rules (DESIGN.md "Where each rule is enforced", layer 2): the
// in-memory model and a real kube-apiserver with deploy/crds refuse the same writes with the same
// cause (field and message), and accept every status write core's capture transitions make.
import type { Capture, CaptureStatus, PodClaim, PodRef } from '../api/types.ts';
import {
  completeClaim,
  decideAcquire,
  failClaim,
  recordJob,
  releaseClaim,
  renewClaim,
  retryCapture,
} from '../capture/claim.ts';
import {
  RULE_EPOCH_NEVER_DECREASES,
  RULE_NEW_HOLDER_NEW_TOKEN,
  RULE_RESULT_NEEDS_CLAIM_TOKEN,
} from '../schema/capture.ts';
import {
  at,
  capture,
  forCreate,
  forPool,
  inNamespace,
  podClaim,
  podClaimSet,
  withMaxAttempts,
} from '../testing/fixtures.ts';
import {
  type ConformanceCase,
  type ConformanceClient,
  equal,
  expectCause,
  expectExactCause,
  fail,
  key,
  rejects,
} from './conformance-assert.ts';

const invalid = (message: string) => `Invalid value: ${message}`;

const pod = (name: string): PodRef => ({ name, uid: `00000000-0000-4000-8000-${name.padStart(12, '0')}` });

async function newCapture(c: ConformanceClient, ns: string, name: string, ...mods: ((o: Capture) => void)[]) {
  return c.create(forCreate(capture(name, inNamespace(ns), ...mods)));
}

/** Writes core's next status for the stored capture (a full status update, fenced on its rv). */
async function transition(
  c: ConformanceClient,
  ns: string,
  name: string,
  next: (cur: Capture) => CaptureStatus,
): Promise<Capture> {
  const cur = await c.get('Capture', key(ns, name));
  return c.updateStatus({ ...cur, status: next(cur) });
}

/** decideAcquire for `who`; the current holder (if any) is looked up as gone, so it is taken over. */
function acquired(who: PodRef, now: number) {
  return (cur: Capture): CaptureStatus => {
    const out = decideAcquire(cur, who, { found: false }, now);
    if (out.kind !== 'acquired' && out.kind !== 'tookOver' && out.kind !== 'reentered') {
      return fail(`acquire for ${who.name}: ${out.kind}`);
    }
    return out.status;
  };
}

const token = (c: Capture): number => c.status?.claim?.token ?? fail(`${c.metadata.name}: no claim`);

export const crdRuleConformanceCases: ConformanceCase[] = [
  {
    name: "CRD rules: every status write of core's capture transitions is accepted",
    async run(c, ns) {
      const t = Date.parse(at(0));
      await newCapture(c, ns, 'flow');
      let cur = await transition(c, ns, 'flow', acquired(pod('a'), t));
      equal([cur.status?.epoch, token(cur)], [1, 1], 'epoch and token after acquire');
      cur = await transition(c, ns, 'flow', acquired(pod('a'), t + 1000)); // re-entry
      cur = await transition(c, ns, 'flow', (x) => renewClaim(x.status!, token(x), t + 2000));
      cur = await transition(c, ns, 'flow', (x) => recordJob(x.status!, token(x), 'job-1', t + 3000));
      cur = await transition(c, ns, 'flow', (x) => releaseClaim(x.status!, token(x)));
      cur = await transition(c, ns, 'flow', acquired(pod('b'), t + 4000));
      cur = await transition(c, ns, 'flow', acquired(pod('c'), t + 5000)); // takeover from a gone holder
      equal([cur.status?.epoch, token(cur), cur.status?.takeovers], [3, 3, 1], 'after the takeover');
      cur = await transition(c, ns, 'flow', (x) =>
        failClaim(x.status!, token(x), 'boom', x.spec.maxAttempts),
      );
      cur = await transition(c, ns, 'flow', acquired(pod('a'), t + 6000));
      cur = await transition(c, ns, 'flow', (x) =>
        completeClaim(x.status!, token(x), 'registry/r:4', t + 7000),
      );
      equal(
        [cur.status?.phase, cur.status?.result?.token, cur.status?.claim],
        ['Captured', 4, undefined],
        'done',
      );
      // The controller's later status writes keep the result; spec and label updates keep status.
      cur = await transition(c, ns, 'flow', (x) => ({ ...x.status!, observedGeneration: 2 }));
      cur = await c.update({ ...cur, metadata: { ...cur.metadata, labels: { seen: 'yes' } } });
      await c.patch('Capture', key(ns, 'flow'), { spec: { leaseSeconds: 60 } });

      // A Failed capture retried: the result-less status starts over, epoch kept.
      await newCapture(c, ns, 'retry', withMaxAttempts(1));
      await transition(c, ns, 'retry', acquired(pod('a'), t));
      cur = await transition(c, ns, 'retry', (x) =>
        failClaim(x.status!, token(x), 'boom', x.spec.maxAttempts),
      );
      equal(cur.status?.phase, 'Failed', 'phase after the last attempt');
      cur = await transition(c, ns, 'retry', (x) => retryCapture(x.status!));
      cur = await transition(c, ns, 'retry', acquired(pod('b'), t + 1000));
      equal([cur.status?.phase, cur.status?.epoch], ['Capturing', 2], 'after the retry');
    },
  },
  {
    name: "CRD rules: the issue's stale-token result patch is refused (epoch 5, claim closed, result.token 1)",
    async run(c, ns) {
      // Epoch 5 the only way the CRD allows: a claim with token 5, then closed.
      await newCapture(c, ns, 'stale');
      await transition(c, ns, 'stale', acquired(pod('a'), Date.parse(at(0))));
      await c.patchStatus('Capture', key(ns, 'stale'), { status: { epoch: 5, claim: { token: 5 } } });
      await c.patchStatus('Capture', key(ns, 'stale'), { status: { phase: 'Pending', claim: null } });
      const e = await rejects(
        c.patchStatus('Capture', key(ns, 'stale'), {
          status: {
            phase: 'Captured',
            result: { ref: 'x', token: 1, capturedFrom: pod('a'), completionTime: at(0) },
          },
        }),
        ['Invalid'],
        'a result with a stale token',
      );
      expectExactCause(e, 'status.result.token', invalid(RULE_RESULT_NEEDS_CLAIM_TOKEN.message));
      const after = (await c.get('Capture', key(ns, 'stale'))).status;
      equal([after?.phase, after?.result], ['Pending', undefined], 'status after the refusal');
    },
  },
  {
    name: 'CRD rules: an epoch decrease and a new holder whose token is not the epoch are refused',
    async run(c, ns) {
      const t = Date.parse(at(0));
      await newCapture(c, ns, 'fence');
      await transition(c, ns, 'fence', acquired(pod('a'), t));
      await c.patchStatus('Capture', key(ns, 'fence'), { status: { epoch: 5, claim: { token: 5 } } });
      const down = await rejects(
        c.patchStatus('Capture', key(ns, 'fence'), { status: { epoch: 4, claim: null } }),
        ['Invalid'],
        'an epoch decrease',
      );
      expectExactCause(down, 'status.epoch', invalid(RULE_EPOCH_NEVER_DECREASES.message));
      const holder = await rejects(
        c.patchStatus('Capture', key(ns, 'fence'), {
          status: { epoch: 7, claim: { holder: pod('b'), token: 6 } },
        }),
        ['Invalid'],
        'a new holder with token 6 at epoch 7',
      );
      expectExactCause(holder, 'status.claim.token', invalid(RULE_NEW_HOLDER_NEW_TOKEN.message));
      const sameToken = await rejects(
        c.patchStatus('Capture', key(ns, 'fence'), { status: { claim: { holder: pod('b') } } }),
        ['Invalid'],
        'another holder under the current token',
      );
      expectExactCause(sameToken, 'status.claim.token', invalid(RULE_NEW_HOLDER_NEW_TOKEN.message));
      const st = (await c.get('Capture', key(ns, 'fence'))).status;
      equal([st?.epoch, st?.claim?.token, st?.claim?.holder.name], [5, 5, 'a'], 'status after the refusals');
      // The fenced path is still open: a takeover with token = epoch + 1.
      await c.patchStatus('Capture', key(ns, 'fence'), {
        status: { epoch: 6, claim: { holder: pod('b'), token: 6 } },
      });
    },
  },
  {
    name: 'CRD rules: sourcePod == podName, a legacy spec binding set again and a poolName change (claim or set template) are refused alike',
    async run(c, ns) {
      const mk = (name: string, spec: Partial<PodClaim['spec']>): PodClaim => {
        const o = forCreate(podClaim(name, inNamespace(ns), forPool('web')));
        o.spec = { ...o.spec, ...spec };
        return o;
      };
      const SAME = 'Invalid value: sourcePod must differ from podName';
      expectExactCause(
        await rejects(c.create(mk('same', { podName: 'p1', sourcePod: 'p1' })), ['Invalid'], 'create'),
        'spec.sourcePod',
        SAME,
      );
      await c.create(mk('rules', { podName: 'p1' }));
      // An earlier release's binding in spec is kept or removed, never set again (the binding is status).
      expectExactCause(
        await rejects(
          c.patch('PodClaim', key(ns, 'rules'), { spec: { podName: 'p2' } }),
          ['Invalid'],
          'spec.podName changed',
        ),
        'spec.podName',
        'Invalid value: spec.podName is no longer written: the binding is in status (it may only be removed)',
      );
      await c.patch('PodClaim', key(ns, 'rules'), { spec: { podName: null } });
      await c.patchStatus('PodClaim', key(ns, 'rules'), { status: { podName: 'p1' } });
      expectExactCause(
        await rejects(
          c.patchStatus('PodClaim', key(ns, 'rules'), { status: { sourcePod: 'p1' } }),
          ['Invalid'],
          'sourcePod set to podName',
        ),
        'status.sourcePod',
        SAME,
      );
      expectExactCause(
        await rejects(
          c.patch('PodClaim', key(ns, 'rules'), { spec: { poolName: 'other' } }),
          ['Invalid'],
          'a poolName change',
        ),
        'spec.poolName',
        'Invalid value: "other": poolName is immutable',
      );
      // A migration's legitimate binding (another source pod) passes.
      await c.patchStatus('PodClaim', key(ns, 'rules'), { status: { podName: 'p2', sourcePod: 'p1' } });
      await c.patchStatus('PodClaim', key(ns, 'rules'), { status: { sourcePod: null } });
      // A PodClaimSet's template names its pool for good too; scaling it is fine.
      await c.create(forCreate(podClaimSet('set', inNamespace(ns))));
      expectExactCause(
        await rejects(
          c.patch('PodClaimSet', key(ns, 'set'), { spec: { template: { spec: { poolName: 'other' } } } }),
          ['Invalid'],
          "a PodClaimSet template's poolName change",
        ),
        'spec.template.spec.poolName',
        'Invalid value: "other": poolName is immutable',
      );
      await c.patch('PodClaimSet', key(ns, 'set'), { spec: { replicas: 2 } });
    },
  },
  {
    name: 'CRD rules: podMetadata refuses claimkit.dev/ keys and the disruption hints; lostPolicy defaults to Rebind',
    async run(c, ns) {
      const mk = (name: string, podMetadata: PodClaim['spec']['podMetadata']): PodClaim => {
        const o = forCreate(podClaim(name, inNamespace(ns), forPool('web')));
        o.spec = { ...o.spec, podMetadata };
        return o;
      };
      expectExactCause(
        await rejects(
          c.create(mk('l', { labels: { 'claimkit.dev/state': 'Idle' } })),
          ['Invalid'],
          'a claimkit label',
        ),
        'spec.podMetadata.labels',
        'Invalid value: podMetadata may not set claimkit.dev/ labels',
      );
      expectCause(
        await rejects(
          c.create(mk('a', { annotations: { 'karpenter.sh/do-not-disrupt': 'false' } })),
          ['Invalid'],
          'a disruption hint',
        ),
        'spec.podMetadata.annotations',
        'podMetadata may not set the disruption hints',
      );
      const ok = await c.create(mk('ok', { labels: { team: 'a' }, annotations: { 'example.com/o': 'x' } }));
      equal(ok.spec.lostPolicy, 'Rebind', 'the defaulted lostPolicy');
      expectCause(
        await rejects(
          c.patch('PodClaim', key(ns, 'ok'), {
            spec: { podMetadata: { annotations: { 'claimkit.dev/x': 'y' } } },
          }),
          ['Invalid'],
          'a claimkit annotation added later',
        ),
        'spec.podMetadata.annotations',
        'podMetadata may not set claimkit.dev/ annotations',
      );
      await c.patch('PodClaim', key(ns, 'ok'), { spec: { lostPolicy: 'Fail' } });
      await c.patch('PodClaim', key(ns, 'ok'), { spec: { lostPolicy: 'Rebind' } });
    },
  },
  {
    name: 'CRD rules: a blocking schema violation keeps the rules from running, and says so',
    async run(c, ns) {
      const o = forCreate(podClaim('blocked', inNamespace(ns), forPool('web')));
      o.spec = { ...o.spec, podName: 5 as unknown as string, sourcePod: 'p' };
      const e = await rejects(c.create(o), ['Invalid'], 'a type error');
      expectExactCause(
        e,
        '<nil>',
        'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      );
      equal(e.causes.length, 2, 'causes (the type error and the note, no rule results)');
    },
  },
];
