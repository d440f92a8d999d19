// deploy/helm/claimkit: the committed files are what chart.ts generates, `helm lint` passes, and
// `helm template` renders exactly the objects of deploy/controller, deploy/webhook and
// deploy/policies (in the release's namespace), with the values users set: images, replicas, flags,
// components, the controller's identity in the policies, and the certificate either from
// cert-manager or from a CA bundle they give.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { controllerManifests } from '@claimkit/controller';
import { policiesManifests } from '@claimkit/core';
import { webhookManifests } from '@claimkit/webhook';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { loadYaml } from '../harness/index.ts';
import { e2eClients, useTestNamespace } from '../harness/vitest.ts';
import { CHART_DIR, chartFiles } from './chart.ts';

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [k: string]: unknown;
};

const chart = fileURLToPath(CHART_DIR);
let helm = '';

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { maxBuffer: 64 * 1024 * 1024, timeout: 900_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

async function template(...set: string[]): Promise<Obj[]> {
  const r = await run(helm, [
    'template',
    'claimkit',
    chart,
    '--namespace',
    'claimkit-system',
    ...set.flatMap((s) => ['--set', s]),
  ]);
  if (r.code !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return parseDocs(r.stdout);
}

/** The documents of a multi-document YAML stream, without the empty ones (a template rendered off). */
function parseDocs(text: string): Obj[] {
  return text
    .split(/^---\s*$/m)
    .filter((d) => d.split('\n').some((l) => l.trim() !== '' && !l.trim().startsWith('#')))
    .map((d) => loadYaml<Obj>(d));
}

const key = (o: Obj) => `${o.kind}/${o.metadata.name}`;
const byKey = (objs: Obj[]) => new Map(objs.map((o) => [key(o), o]));

/** The objects of deploy/, as kubectl apply -k would create them (no Namespace, no Kustomization). */
function deployObjects(component: 'controller' | 'webhook' | 'policies'): Obj[] {
  const files =
    component === 'controller'
      ? controllerManifests()
      : component === 'webhook'
        ? webhookManifests()
        : policiesManifests();
  return files
    .flatMap((f) => f.objects as Obj[])
    .filter((o) => o.kind !== 'Namespace' && o.kind !== 'Kustomization');
}

describe('the Helm chart (deploy/helm/claimkit)', () => {
  const testNs = useTestNamespace('helm');
  beforeAll(() => {
    // Built by global-setup.ts while the cluster starts (apps/e2e/controlplane/build-helm.sh).
    const built = inject('claimkitHelm');
    if (!built?.path)
      throw new Error(built?.error ?? 'no helm: run the e2e project (global-setup.ts builds it)');
    helm = built.path;
  });

  it('is generated from the manifests (run apps/e2e/src/helm/generate.ts after changing them)', () => {
    for (const f of chartFiles()) {
      expect(readFileSync(new URL(f.path, CHART_DIR), 'utf8'), f.path).toBe(f.text);
    }
  });

  it('passes helm lint', async () => {
    const r = await run(helm, ['lint', '--strict', chart]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it('renders exactly the objects of deploy/controller, deploy/webhook and deploy/policies by default', async () => {
    const got = byKey(await template());
    const want = [...deployObjects('controller'), ...deployObjects('webhook'), ...deployObjects('policies')];
    expect([...got.keys()].sort()).toEqual(want.map(key).sort());
    for (const o of want) {
      const g = structuredClone(got.get(key(o))!) as Obj & {
        spec?: { template?: { spec?: { containers?: Record<string, unknown>[] } } };
      };
      // The chart adds imagePullPolicy (a value); everything else is the same object.
      for (const c of g.spec?.template?.spec?.containers ?? []) delete c.imagePullPolicy;
      expect(g, key(o)).toEqual(o);
    }
  });

  it('takes the release namespace, images, replicas and controller flags from values', async () => {
    const objs = byKey(
      await template(
        'controller.image.repository=registry.example/ck/controller',
        'controller.image.tag=1.2.3',
        'controller.replicas=3',
        'controller.concurrency=16',
        'webhook.replicas=1',
      ),
    );
    const dep = objs.get('Deployment/claimkit-controller') as unknown as {
      spec: { replicas: number; template: { spec: { containers: { image: string; args: string[] }[] } } };
    };
    expect(dep.spec.replicas).toBe(3);
    expect(dep.spec.template.spec.containers[0]!.image).toBe('registry.example/ck/controller:1.2.3');
    expect(dep.spec.template.spec.containers[0]!.args).toContain('--concurrency=16');
    expect(
      (objs.get('Deployment/claimkit-webhook') as unknown as { spec: { replicas: number } }).spec.replicas,
    ).toBe(1);
    const other = await run(helm, ['template', 'claimkit', chart, '--namespace', 'ops']);
    const rendered = parseDocs(other.stdout);
    for (const o of rendered) if (o.metadata.namespace) expect(o.metadata.namespace, key(o)).toBe('ops');
    expect(other.stdout).not.toContain('claimkit-system');
  });

  it("fills the policies' controller identity from values (the release namespace by default)", async () => {
    const identity = async (...set: string[]) => {
      const r = await run(helm, [
        'template',
        'claimkit',
        chart,
        '--namespace',
        'ops',
        ...set.flatMap((x) => ['--set', x]),
      ]);
      if (r.code !== 0) throw new Error(r.stderr);
      const vap = parseDocs(r.stdout).find(
        (o) => o.metadata.name === 'claimkit-podclaim-writers' && o.kind === 'ValidatingAdmissionPolicy',
      ) as unknown as {
        spec: { variables: { name: string; expression: string }[] };
      };
      const v = (n: string) => JSON.parse(vap.spec.variables.find((x) => x.name === n)!.expression);
      return { users: v('controllerUsernames'), groups: v('controllerGroups') };
    };
    expect(await identity()).toEqual({
      users: ['system:serviceaccount:ops:claimkit-controller'],
      groups: [],
    });
    expect(
      await identity(
        'policies.controllerServiceAccount.namespace=ck',
        'policies.controllerServiceAccount.name=ctl',
        'policies.controllerUsers={admin@example.com,system:serviceaccount:ck:ctl}',
        'policies.controllerGroups={ck-controllers}',
      ),
    ).toEqual({
      users: ['system:serviceaccount:ck:ctl', 'admin@example.com'],
      groups: ['ck-controllers'],
    });
  });

  it('without cert-manager: no Issuer or Certificate, the given caBundle on every webhook, and it is required', async () => {
    const objs = await template('webhook.certManager.enabled=false', 'webhook.caBundle=Q0E=');
    expect(objs.map((o) => o.kind)).not.toContain('Certificate');
    expect(objs.map((o) => o.kind)).not.toContain('Issuer');
    const vwc = objs.find((o) => o.kind === 'ValidatingWebhookConfiguration') as unknown as {
      metadata: { annotations?: Record<string, string> | null };
      webhooks: { clientConfig: { caBundle?: string } }[];
    };
    expect(vwc.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBeUndefined();
    expect(vwc.webhooks.map((w) => w.clientConfig.caBundle)).toEqual(vwc.webhooks.map(() => 'Q0E='));
    const missing = await run(helm, [
      'template',
      'claimkit',
      chart,
      '--set',
      'webhook.certManager.enabled=false',
    ]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('webhook.caBundle is required');
  });

  it('renders objects the real API server accepts (server-side dry run of every object)', async () => {
    const ns = testNs.name;
    const objs = (await template('webhook.certManager.enabled=false', 'webhook.caBundle=Q0E=')).map((o) =>
      o.metadata.namespace ? { ...o, metadata: { ...o.metadata, namespace: ns } } : o,
    );
    const refused: string[] = [];
    for (const o of objs) {
      try {
        await e2eClients().objects.create(o as never, undefined, 'All');
      } catch (e) {
        // Cluster-scoped objects another test file created meanwhile (claimkit-edit, ...) are fine.
        const code = (e as { code?: number }).code;
        if (code === 409 && !o.metadata.namespace) continue;
        refused.push(`${key(o)}: ${code} ${String((e as { body?: unknown }).body ?? e).slice(0, 300)}`);
      }
    }
    expect(refused).toEqual([]);
    // The dry run does validate: the same Deployment with a negative replica count is refused.
    const dep = objs.find((o) => o.kind === 'Deployment')! as Obj & { spec: { replicas: number } };
    const bad = e2eClients().objects.create(
      { ...dep, spec: { ...dep.spec, replicas: -1 } } as never,
      undefined,
      'All',
    );
    await expect(bad).rejects.toMatchObject({ code: 422 });
  });

  it('refuses values that are misspelt or out of range (values.schema.json)', async () => {
    for (const bad of [
      'controller.replica=3',
      'controller.logLevel=loud',
      'webhook.image.pullPolicy=Sometimes',
      'policies.controllerServiceAccount.nmae=ctl',
      'policies.controllerServiceAccount.namespace=Not_A_Namespace',
    ]) {
      const r = await run(helm, ['template', 'claimkit', chart, '--set', bad]);
      expect(r.code, bad).not.toBe(0);
      expect(r.stderr, bad).toMatch(/values don't meet the specifications of the schema/);
    }
  });

  it('installs one component alone', async () => {
    const onlyController = await template('webhook.enabled=false');
    expect(
      [...new Set(onlyController.map((o) => o.metadata.name))].every((n) => !n.includes('webhook')),
    ).toBe(true);
    expect(onlyController.map(key)).toContain('Deployment/claimkit-controller');
    const onlyWebhook = await template('controller.enabled=false');
    expect(onlyWebhook.map(key)).toContain('Deployment/claimkit-webhook');
    expect(onlyWebhook.map(key)).not.toContain('Deployment/claimkit-controller');
    const onlyPolicies = await template('controller.enabled=false', 'webhook.enabled=false');
    expect(onlyPolicies.map(key).sort()).toEqual(deployObjects('policies').map(key).sort());
    const noPolicies = await template('policies.enabled=false');
    expect(noPolicies.map((o) => o.kind)).not.toContain('ValidatingAdmissionPolicy');
  });
});
