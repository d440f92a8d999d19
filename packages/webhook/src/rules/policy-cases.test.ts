// The webhook and the `policies` component (core's ValidatingAdmissionPolicies) enforce the same
// writer and pod-label rules: every case of core's POLICY_CASES, which the e2e suite replays on the
// real API server with the policies installed, gets the same answer and wording from the webhook.
import {
  expectedPolicyMessage,
  POLICY_CASES,
  type PolicyCase,
  policyCaseRequest,
} from '@claimkit/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryPodClaimIndex } from '../claim-index.ts';
import { validatePodClaim } from './podclaims.ts';
import { validatePod } from './pods.ts';
import type { RuleContext, RuleInput } from './types.ts';

const CONTROLLER = 'system:serviceaccount:claimkit-system:claimkit-controller';
const GROUP = 'claimkit-controllers';
const OTHER = 'alice@example.invalid';
const ctx: RuleContext = {
  controller: { usernames: [CONTROLLER], groups: [GROUP] },
  index: new MemoryPodClaimIndex({ synced: true }),
};

function verdictOf(c: PolicyCase) {
  const req = policyCaseRequest(c, {
    controller: { username: CONTROLLER, groups: ['system:serviceaccounts'] },
    controllerGroup: { username: 'someone', groups: ['system:authenticated', GROUP] },
    other: { username: OTHER, groups: ['system:authenticated'] },
  });
  const input: RuleInput = {
    operation: req.operation,
    object: req.object,
    oldObject: req.oldObject ?? undefined,
    userInfo: req.userInfo,
    namespace: 'default',
    name: 'case',
  };
  return c.policy === 'pool-pod-labels' ? validatePod(input, ctx) : validatePodClaim(input, ctx);
}

describe('the webhook answers every policy case as the admission policies do', () => {
  it.each(POLICY_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const v = verdictOf(c);
    expect(v.allowed).toBe(c.expect.allowed);
    if (!v.allowed) {
      const texts = v.violations.map((x) => (x.field ? `${x.field}: ${x.message}` : x.message));
      expect(
        texts.some((t) => t.includes(expectedPolicyMessage(c, OTHER)!)),
        texts.join('\n'),
      ).toBe(true);
    }
  });
});
