import { describe, expect, it } from 'vitest';
import { POLICY_CASES } from './cases.ts';
import { admissionPolicies, admissionPolicyObjects, POLICY_NAMES, policiesManifests } from './manifests.ts';
import {
  celString,
  celStringList,
  DEFAULT_CONTROLLER_USERNAME,
  PolicyOptionsError,
  serviceAccountUsername,
} from './options.ts';

const variable = (name: string, opts = {}) =>
  admissionPolicies(opts)['podclaim-writers'].policy.spec.variables.find((v) => v.name === name)?.expression;

describe('deploy/policies', () => {
  it('one file per policy, and the kustomization lists them all', () => {
    const files = policiesManifests();
    const policyFiles = POLICY_NAMES.map((n) => `${n}.yaml`);
    expect(files.map((f) => f.file)).toEqual([...policyFiles, 'kustomization.yaml']);
    const kustomization = files.find((f) => f.file === 'kustomization.yaml')!.objects[0];
    expect(kustomization?.resources).toEqual(policyFiles);
  });
});

describe('admission policies', () => {
  it('fail closed and bind each policy with Deny', () => {
    for (const name of POLICY_NAMES) {
      const { policy, binding } = admissionPolicies()[name];
      expect(policy.metadata.name).toBe(`claimkit-${name}`);
      expect(policy.spec.failurePolicy).toBe('Fail');
      expect(binding.spec).toEqual({ policyName: policy.metadata.name, validationActions: ['Deny'] });
      for (const v of policy.spec.validations) expect(v.message).not.toBe('');
    }
  });

  it('variables are defined before they are used', () => {
    for (const name of POLICY_NAMES) {
      const { policy } = admissionPolicies()[name];
      const seen = new Set<string>();
      const used = (e: string) => [...e.matchAll(/variables\.(\w+)/g)].map((m) => m[1]!);
      for (const v of policy.spec.variables) {
        for (const u of used(v.expression)) expect(seen, `${name}: ${v.name} uses ${u}`).toContain(u);
        seen.add(v.name);
      }
      for (const v of policy.spec.validations) {
        for (const u of used(`${v.expression} ${v.messageExpression ?? ''}`)) expect(seen).toContain(u);
      }
    }
  });

  it('match pool pods only (by label, old or new) and PodClaims with their status (the binding)', () => {
    const p = admissionPolicies();
    expect(p['pool-pod-labels'].policy.spec.matchConstraints).toMatchObject({
      resourceRules: [
        { apiGroups: [''], resources: ['pods', 'pods/status'], operations: ['CREATE', 'UPDATE'] },
      ],
      objectSelector: { matchExpressions: [{ key: 'claimkit.dev/pool', operator: 'Exists' }] },
    });
    expect(p['podclaim-writers'].policy.spec.matchConstraints.resourceRules).toEqual([
      expect.objectContaining({ apiGroups: ['claimkit.dev'], resources: ['podclaims', 'podclaims/status'] }),
    ]);
  });

  it("take the controller's identity from options", () => {
    expect(variable('controllerUsernames')).toBe(JSON.stringify([DEFAULT_CONTROLLER_USERNAME]));
    expect(DEFAULT_CONTROLLER_USERNAME).toBe('system:serviceaccount:claimkit-system:claimkit-controller');
    expect(
      variable('controllerUsernames', {
        controllerServiceAccount: { namespace: 'ops', name: 'ck' },
        controllerUsers: ['admin@example.com', 'system:serviceaccount:ops:ck'],
      }),
    ).toBe('["system:serviceaccount:ops:ck","admin@example.com"]');
    expect(variable('controllerGroups', { controllerGroups: ['ck-controllers'] })).toBe('["ck-controllers"]');
  });

  it('name prefix and namespace selector reach every object', () => {
    const objs = admissionPolicyObjects({
      namePrefix: 'claimkit-e2e-x',
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'x' } },
    });
    expect(objs.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ValidatingAdmissionPolicy/claimkit-e2e-x-podclaim-writers',
      'ValidatingAdmissionPolicyBinding/claimkit-e2e-x-podclaim-writers',
      'ValidatingAdmissionPolicy/claimkit-e2e-x-pool-pod-labels',
      'ValidatingAdmissionPolicyBinding/claimkit-e2e-x-pool-pod-labels',
    ]);
    for (const o of objs) {
      if (o.kind === 'ValidatingAdmissionPolicyBinding') {
        expect(o.spec.matchResources).toEqual({
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'x' } },
        });
      }
    }
  });

  it('refuse bad options with a clear error', () => {
    expect(() => serviceAccountUsername({ namespace: 'Bad_NS', name: 'x' })).toThrow(
      /namespace "Bad_NS" is not a valid namespace name/,
    );
    expect(() => admissionPolicies({ controllerServiceAccount: { namespace: 'ok', name: '' } })).toThrow(
      PolicyOptionsError,
    );
    expect(() => admissionPolicies({ controllerUsers: [' '] })).toThrow(/controllerUsers must be non-empty/);
    expect(() => admissionPolicies({ controllerGroups: ['\ud800'] })).toThrow(/not valid Unicode/);
    expect(() => admissionPolicies({ namePrefix: 'Not A Name' })).toThrow(/namePrefix/);
  });

  it('write CEL string literals that keep quotes and backslashes', () => {
    expect(celString("it's a\\b")).toBe("'it\\'s a\\\\b'");
    expect(celStringList(['a"b', 'c'])).toBe('["a\\"b","c"]');
  });

  it('have cases for every policy, allowed and refused', () => {
    for (const name of POLICY_NAMES) {
      const cases = POLICY_CASES.filter((c) => c.policy === name);
      expect(cases.some((c) => c.expect.allowed)).toBe(true);
      expect(cases.some((c) => !c.expect.allowed)).toBe(true);
    }
    expect(new Set(POLICY_CASES.map((c) => c.name)).size).toBe(POLICY_CASES.length);
  });
});
