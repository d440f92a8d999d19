import { readFileSync } from 'node:fs';
import { CONTROLLER_NAME, toYaml } from '@claimkit/core';
import { describe, expect, it } from 'vitest';
import { controllerManifests, controllerRules, renderManifestFile } from './manifests.ts';

const deployDir = new URL('../../../deploy/controller/', import.meta.url);

describe('deploy/controller', () => {
  for (const f of controllerManifests()) {
    it(`${f.file} is generated from manifests.ts`, () => {
      const committed = readFileSync(new URL(f.file, deployDir), 'utf8');
      expect(
        committed,
        'run: node --conditions=source packages/controller/scripts/generate-manifests.ts',
      ).toBe(renderManifestFile(f, toYaml));
    });
  }

  it('grants what the reconcilers do, and the service account is the identity the webhook trusts', () => {
    const rules = controllerRules() as { resources: string[]; verbs: string[] }[];
    const can = (res: string, verb: string) =>
      rules.some((r) => r.resources.includes(res) && r.verbs.includes(verb));
    for (const r of ['captures', 'podpools', 'podclaims', 'podclaimsets'])
      for (const v of ['get', 'list', 'watch', 'update', 'patch']) expect(can(r, v), `${v} ${r}`).toBe(true);
    expect(can('captures/status', 'update')).toBe(true);
    expect(can('podclaimsets/scale', 'update')).toBe(true);
    for (const v of ['get', 'list', 'watch', 'create', 'patch', 'delete']) expect(can('pods', v)).toBe(true);
    expect(can('events', 'create')).toBe(true);
    expect(can('nodes/proxy', 'create')).toBe(true);
    const rbac = controllerManifests().find((f) => f.file === 'rbac.yaml')!;
    expect(rbac.objects[0]).toMatchObject({ kind: 'ServiceAccount', metadata: { name: CONTROLLER_NAME } });
    const dep = controllerManifests().find((f) => f.file === 'deployment.yaml')!.objects[0] as {
      spec: { replicas: number; template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(dep.spec.replicas).toBe(2);
    expect(dep.spec.template.spec.containers[0]!.args).toContain('--leader-elect');
  });
});
