// The embedded copy of deploy/ is checked against deploy/ by tools/manifests' drift test.
import { describe, expect, test } from 'vitest';
import { parseCommand } from './args.ts';
import { MANIFESTS_OPTIONS, parseComponents, renderManifests } from './manifests.ts';

describe('manifests', () => {
  test('CRDs first, a shared document once, each document tagged with its source', () => {
    const ns = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: claimkit-system\n';
    const text = renderManifests(['webhook', 'crds', 'controller'], {
      policies: [],
      crds: [
        {
          file: 'a.yaml',
          yaml: '# comment\napiVersion: x\nkind: CustomResourceDefinition\nmetadata:\n  name: a\n',
        },
      ],
      controller: [{ file: 'namespace.yaml', yaml: ns }],
      webhook: [
        {
          file: 'namespace.yaml',
          yaml: `# header only\n---\n${ns}---\nkind: Service\nmetadata:\n  name: w\n  namespace: claimkit-system\n`,
        },
      ],
    });
    expect(text.match(/^---$/gm)).toHaveLength(3);
    expect(text.indexOf('CustomResourceDefinition')).toBeLessThan(text.indexOf('Namespace'));
    expect(text).toContain('# Source: deploy/controller/namespace.yaml');
    expect(text).not.toContain('# Source: deploy/webhook/namespace.yaml\napiVersion: v1\nkind: Namespace');
    expect(text).toContain('kind: Service');
  });
  test('components', () => {
    expect(parseCommand(MANIFESTS_OPTIONS, [])?.values.components).toEqual([
      'crds',
      'policies',
      'controller',
      'webhook',
    ]);
    const given = parseCommand(MANIFESTS_OPTIONS, ['--components', 'crds, webhook'])!.values.components;
    expect(parseComponents(given)).toEqual(['crds', 'webhook']);
    expect(() => parseComponents(['crds', 'helm'])).toThrow(/unknown component "helm"/);
    expect(() => parseComponents([])).toThrow('--components must name at least one component');
    expect(renderManifests(['crds'])).toContain('kind: CustomResourceDefinition');
    const policies = renderManifests(['policies']);
    expect(policies.match(/^kind: ValidatingAdmissionPolicy$/gm)).toHaveLength(2);
    expect(policies.match(/^kind: ValidatingAdmissionPolicyBinding$/gm)).toHaveLength(2);
    expect(policies).not.toContain('kind: Kustomization');
  });
});
