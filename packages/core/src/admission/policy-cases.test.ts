// The webhook and the `policies` component (core's ValidatingAdmissionPolicies) enforce the same
// writer and pod-label rules: every case of core's POLICY_CASES, which the e2e suite replays on the
// real API server with the policies installed, gets the same answer and wording from the webhook.
// P1 ("never from one claim to another in one write") is stated once in TypeScript
// (claim-handover.ts) and once in the pool-pod-labels policy's CEL: on every case the two agree,
// word for word.
import { describe, expect, it } from 'vitest';
import type { AdmissionRequest, RuleContext } from '../api/admission-request.ts';
import {
  expectedPolicyMessage,
  POLICY_CASES,
  type PodPolicyCase,
  type PolicyCase,
  policyCaseRequest,
} from '../policies/cases.ts';
import { evaluatePolicy } from '../policies/evaluate.ts';
import { admissionPolicies } from '../policies/manifests.ts';
import { claimHandover, claimHandoverViolations } from './claim-handover.ts';
import { MemoryPodClaimIndex } from './claim-index.ts';
import { validatePodClaim } from './podclaims.ts';
import { validatePod } from './pods.ts';

const CONTROLLER = 'system:serviceaccount:claimkit-system:claimkit-controller';
const GROUP = 'claimkit-controllers';
const OTHER = 'alice@example.invalid';
const ctx: RuleContext = {
  controller: { usernames: [CONTROLLER], groups: [GROUP] },
  index: new MemoryPodClaimIndex({ synced: true }),
};
const users = {
  controller: { username: CONTROLLER, groups: ['system:serviceaccounts'] },
  controllerGroup: { username: 'someone', groups: ['system:authenticated', GROUP] },
  other: { username: OTHER, groups: ['system:authenticated'] },
};

function verdictOf(c: PolicyCase) {
  const input: AdmissionRequest = policyCaseRequest(c, users);
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

describe("P1 in TypeScript and in the pool-pod-labels policy's CEL say the same", () => {
  const policy = admissionPolicies({ controllerGroups: [GROUP] })['pool-pod-labels'].policy;
  const podCases = POLICY_CASES.filter((c): c is PodPolicyCase => c.policy === 'pool-pod-labels');
  // The policy's P1 validations come first, so the API server reports them when they fail.
  const isP1 = (message: string) => / in a single write /.test(message);

  it('the table has hand-overs of the label and of the uid, and writes that are none', () => {
    const moved = podCases.filter((c) => claimHandoverViolations(c.old ?? {}, c.new).length > 0);
    expect(moved.length).toBeGreaterThanOrEqual(3);
    expect(moved.length).toBeLessThan(podCases.length);
    expect(moved.some((c) => claimHandover(c.old?.labels, c.new.labels) === undefined)).toBe(true);
  });

  it.each(podCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const ts = claimHandoverViolations(c.old ?? {}, c.new).map((x) => `${x.field}: ${x.message}`);
    const cel = evaluatePolicy(policy, policyCaseRequest(c, users));
    if (ts.length > 0) {
      expect(cel?.reason).toBe('Forbidden');
      expect(cel?.message).toBe(ts[0]);
    } else if (cel !== undefined) {
      expect(isP1(cel.message), cel.message).toBe(false);
    }
  });
});
