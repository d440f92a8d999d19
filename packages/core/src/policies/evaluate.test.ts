// The model's policy evaluation answers every POLICY_CASE as the real API server does (the e2e
// suite replays the same cases there: apps/e2e/src/policies.test.ts), and the model enforces it.
import { describe, expect, test } from 'vitest';
import { LABEL_CLAIMED_BY, LABEL_POOL, LABEL_STATE } from '../api/constants.ts';
import { CONTROLLER_USER } from '../model/admission.ts';
import { ApiModel } from '../model/api-model.ts';
import { pod, podClaim } from '../testing/fixtures.ts';
import { expectedPolicyMessage, POLICY_CASES, policyCaseRequest } from './cases.ts';
import { evaluatePolicy, policyAdmission } from './evaluate.ts';
import { admissionPolicies } from './manifests.ts';
import { DEFAULT_CONTROLLER_USERNAME } from './options.ts';

const users = {
  controller: { username: DEFAULT_CONTROLLER_USERNAME, groups: ['system:serviceaccounts'] },
  controllerGroup: { username: 'bot', groups: ['claimkit:controllers'] },
  other: { username: 'alice', groups: ['system:authenticated'] },
};
const policies = admissionPolicies({ controllerGroups: ['claimkit:controllers'] });

describe('POLICY_CASES through the model’s CEL', () => {
  for (const c of POLICY_CASES) {
    test(c.name, () => {
      const r = policyCaseRequest(c, users);
      const answer = evaluatePolicy(policies[c.policy].policy, r);
      if (c.expect.allowed) expect(answer).toBeUndefined();
      else {
        expect(answer?.reason).toBe(c.expect.reason);
        expect(answer?.message).toContain(expectedPolicyMessage(c, users.other.username));
      }
    });
  }
});

describe('the model enforces the policies', () => {
  const model = () => new ApiModel({ admission: [policyAdmission()] });

  test('a person may not write status.podName; the controller may', async () => {
    const m = model();
    const person = m.as({ username: 'alice', groups: ['system:authenticated'] });
    await person.create(podClaim('c1'));
    const err = await person
      .patchStatus('PodClaim', { namespace: 'default', name: 'c1' }, { status: { podName: 'p1' } })
      .catch((e) => e);
    expect(err).toMatchObject({ reason: 'Forbidden' });
    expect(String(err.message)).toContain(
      `ValidatingAdmissionPolicy 'claimkit-podclaim-writers' with binding 'claimkit-podclaim-writers' denied request: status.podName: is written only by the claimkit controller, not by "alice"`,
    );
    expect(CONTROLLER_USER.username).toBe(DEFAULT_CONTROLLER_USERNAME);
    await m.patchStatus('PodClaim', { namespace: 'default', name: 'c1' }, { status: { podName: 'p1' } });
    expect(m.getNow('PodClaim', { namespace: 'default', name: 'c1' }).status?.podName).toBe('p1');
  });

  test('a person may unlabel a pool pod but not label it for a claim', async () => {
    const m = model();
    const person = m.as({ username: 'alice' });
    await m.create(
      pod('p', (p) => {
        p.metadata.labels = { [LABEL_POOL]: 'web', [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: 'a' };
        p.metadata.annotations = { 'claimkit.dev/claimed-by-uid': 'uid-a' };
      }),
    );
    const key = { namespace: 'default', name: 'p' };
    await person.patch('Pod', key, {
      metadata: {
        labels: { [LABEL_CLAIMED_BY]: null },
        annotations: { 'claimkit.dev/claimed-by-uid': null },
      },
    });
    const err = await person
      .patch('Pod', key, {
        metadata: {
          labels: { [LABEL_CLAIMED_BY]: 'b' },
          annotations: { 'claimkit.dev/claimed-by-uid': 'uid-b' },
        },
      })
      .catch((e) => e);
    expect(err).toMatchObject({ reason: 'Forbidden' });
    expect(m.getNow('Pod', key).metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
  });
});
