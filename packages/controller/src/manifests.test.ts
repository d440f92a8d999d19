import { readFileSync } from 'node:fs';
import { CONTROLLER_NAME } from '@claimkit/core';
import { describe, expect, it } from 'vitest';
import { parseAgentFlags } from './agent/flags.ts';
import {
  CAPTURE_AGENT_NAME,
  CONTROLLER_CONTAINER,
  captureAgentManifests,
  controllerManifests,
  controllerRules,
  userRoles,
} from './manifests.ts';

describe('deploy/controller', () => {
  it('grants what the reconcilers do, and the service account is the identity the webhook trusts', () => {
    const rules = controllerRules() as { resources: string[]; verbs: string[] }[];
    const can = (res: string, verb: string) =>
      rules.some((r) => r.resources.includes(res) && r.verbs.includes(verb));
    for (const r of ['captures', 'podpools', 'podclaims', 'podclaimsets'])
      for (const v of ['get', 'list', 'watch', 'update', 'patch']) expect(can(r, v), `${v} ${r}`).toBe(true);
    expect(can('captures/status', 'update')).toBe(true);
    expect(can('podclaimsets/scale', 'update')).toBe(true);
    expect(can('podpools/scale', 'update')).toBe(true);
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

  it('tells each replica its pod, UID and container (downward API), and lets it watch pods in its namespace', () => {
    const dep = controllerManifests().find((f) => f.file === 'deployment.yaml')!.objects[0] as {
      spec: { template: { spec: { containers: { name: string; env: Record<string, unknown>[] }[] } } };
    };
    const c = dep.spec.template.spec.containers[0]!;
    expect(c.name).toBe(CONTROLLER_CONTAINER);
    expect(c.env).toEqual(
      expect.arrayContaining([
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
        { name: 'CONTAINER_NAME', value: CONTROLLER_CONTAINER },
      ]),
    );
    const role = controllerManifests()
      .find((f) => f.file === 'rbac.yaml')!
      .objects.find((o) => (o as { kind: string }).kind === 'Role') as {
      metadata: { namespace: string };
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    const can = (group: string, res: string, verb: string) =>
      role.rules.some(
        (r) => r.apiGroups.includes(group) && r.resources.includes(res) && r.verbs.includes(verb),
      );
    for (const v of ['get', 'list', 'watch']) expect(can('', 'pods', v), `${v} pods`).toBe(true);
    for (const v of ['get', 'create', 'update']) expect(can('coordination.k8s.io', 'leases', v)).toBe(true);
  });

  it('runs as a numeric non-root user (the kubelet cannot verify runAsNonRoot for a named one)', () => {
    const dep = controllerManifests().find((f) => f.file === 'deployment.yaml')!.objects[0] as {
      spec: { template: { spec: { securityContext: Record<string, unknown> } } };
    };
    const sc = dep.spec.template.spec.securityContext;
    expect(sc.runAsNonRoot).toBe(true);
    expect(Number.isInteger(sc.runAsUser) && (sc.runAsUser as number) > 0).toBe(true);
    const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
    expect(dockerfile).toMatch(/^USER \d+(:\d+)?$/m);
  });

  it('may set blockOwnerDeletion on what it creates (OwnerReferencesPermissionEnforcement)', () => {
    const rules = controllerRules() as { resources: string[]; verbs: string[] }[];
    for (const r of ['podclaimsets/finalizers', 'podpools/finalizers'])
      expect(
        rules.some((x) => x.resources.includes(r) && x.verbs.includes('update')),
        r,
      ).toBe(true);
  });

  it('ships roles for people (aggregated into admin/edit/view) and for External capture holders', () => {
    const roles = userRoles() as {
      metadata: { name: string; labels: Record<string, string> };
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    }[];
    const byName = (n: string) => roles.find((r) => r.metadata.name === n)!;
    const can = (role: string, res: string, verb: string) =>
      byName(role).rules.some((r) => r.resources.includes(res) && r.verbs.includes(verb));
    expect(byName('claimkit-edit').metadata.labels['rbac.authorization.k8s.io/aggregate-to-edit']).toBe(
      'true',
    );
    expect(byName('claimkit-view').metadata.labels['rbac.authorization.k8s.io/aggregate-to-view']).toBe(
      'true',
    );
    for (const r of ['captures', 'podpools', 'podclaims', 'podclaimsets']) {
      expect(can('claimkit-edit', r, 'create'), r).toBe(true);
      expect(can('claimkit-view', r, 'list'), r).toBe(true);
      expect(can('claimkit-view', r, 'create'), r).toBe(false);
    }
    // What core's holder operations (claimctl capture acquire|renew|complete|fail) call.
    expect(can('claimkit-capture-holder', 'captures', 'get')).toBe(true);
    expect(can('claimkit-capture-holder', 'captures/status', 'update')).toBe(true);
    expect(can('claimkit-capture-holder', 'pods', 'get')).toBe(true);
    expect(can('claimkit-capture-holder', 'captures', 'update')).toBe(false);
  });
});

describe('the capture agent DaemonSet (the chart only: captureAgent.enabled)', () => {
  type Container = {
    command: string[];
    args: string[];
    env: Record<string, unknown>[];
    ports: Record<string, unknown>[];
    volumeMounts: { name: string; mountPath: string }[];
    securityContext: Record<string, unknown>;
  };
  const files = captureAgentManifests();
  const objects = files.flatMap((f) => f.objects) as {
    kind: string;
    metadata: { name: string };
    rules?: unknown;
    spec?: {
      template: {
        spec: {
          serviceAccountName: string;
          securityContext: Record<string, unknown>;
          containers: Container[];
          volumes: { name: string; hostPath: { path: string } }[];
        };
      };
    };
  }[];
  const ds = objects.find((o) => o.kind === 'DaemonSet')!;
  const pod = ds.spec!.template.spec;
  const c = pod.containers[0]!;

  it('is not in deploy/controller', () => {
    const names = controllerManifests().flatMap((f) =>
      f.objects.map((o) => (o as { metadata?: { name: string } }).metadata?.name),
    );
    expect(names).not.toContain(CAPTURE_AGENT_NAME);
  });

  it('runs the bin the controller image carries, with flags the agent accepts, and the node from the downward API', () => {
    expect(c.command).toEqual(['node', '/app/dist/agent/main.js']);
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(pkg.bin['claimkit-capture-agent']).toBe('./dist/agent/main.js');
    const flags = parseAgentFlags(c.args, { NODE_IP: '10.0.0.1', NODE_NAME: 'n1' });
    expect(flags).toMatchObject({
      capture: 'kubelet',
      listen: { host: '0.0.0.0', port: 8750 },
      stateDir: '/var/lib/claimkit-agent/state',
      kubelet: {
        insecureTLS: true,
        checkpointDir: '/var/lib/kubelet/checkpoints',
        storeDir: '/var/lib/claimkit-agent/archives',
        host: '10.0.0.1',
        nodeName: 'n1',
      },
    });
    expect(c.env).toEqual([
      { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
      { name: 'NODE_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ]);
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8750, hostPort: 8750 }]);
  });

  it('mounts both host directories at their node paths (so refs name node paths), and runs as root', () => {
    const hostPath = (name: string) => pod.volumes.find((v) => v.name === name)!.hostPath.path;
    for (const m of c.volumeMounts) expect(m.mountPath, m.name).toBe(hostPath(m.name));
    expect(c.volumeMounts.map((m) => m.mountPath).sort()).toEqual([
      '/var/lib/claimkit-agent',
      '/var/lib/kubelet/checkpoints',
    ]);
    expect(pod.securityContext).toMatchObject({ runAsUser: 0, runAsNonRoot: false });
    expect(c.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
    });
  });

  it('may get nodes/pods and create nodes/checkpoint (GET /pods, POST /checkpoint on its kubelet), nothing else: never nodes/proxy', () => {
    expect(pod.serviceAccountName).toBe(CAPTURE_AGENT_NAME);
    expect(objects.find((o) => o.kind === 'ClusterRole')!.rules).toEqual([
      { apiGroups: [''], resources: ['nodes/pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['nodes/checkpoint'], verbs: ['create'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    ]);
    expect(objects.map((o) => o.kind)).toEqual([
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'DaemonSet',
    ]);
  });

  it('with image: --image-repository, the registry CA (a ConfigMap) and credentials (a Secret) mounted read-only; without it, nothing changes', () => {
    expect(captureAgentManifests({ image: undefined })).toEqual(files);
    const withImage = captureAgentManifests({
      image: {
        repository: 'registry.example.com/claimkit/ckpt',
        caConfigMap: 'registry-ca',
        authSecret: 'registry-push',
      },
    });
    const ds2 = withImage
      .flatMap((f) => f.objects)
      .find((o) => (o as { kind: string }).kind === 'DaemonSet') as typeof ds;
    const pod2 = ds2.spec!.template.spec;
    const c2 = pod2.containers[0]!;
    expect(c2.args.slice(0, c.args.length)).toEqual(c.args);
    expect(parseAgentFlags(c2.args, { NODE_IP: '10.0.0.1', NODE_NAME: 'n1' }).kubelet.image).toEqual({
      repository: 'registry.example.com/claimkit/ckpt',
      caFile: '/etc/claimkit/registry-ca/ca.crt',
      insecureTLS: false,
      plainHTTP: false,
      authFile: '/etc/claimkit/registry-auth/config.json',
    });
    expect(c2.volumeMounts.slice(c.volumeMounts.length)).toEqual([
      { name: 'registry-ca', mountPath: '/etc/claimkit/registry-ca', readOnly: true },
      { name: 'registry-auth', mountPath: '/etc/claimkit/registry-auth', readOnly: true },
    ]);
    expect((pod2.volumes as unknown[]).slice(pod.volumes.length)).toEqual([
      { name: 'registry-ca', configMap: { name: 'registry-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      {
        name: 'registry-auth',
        secret: { secretName: 'registry-push', items: [{ key: '.dockerconfigjson', path: 'config.json' }] },
      },
    ]);
    const bare = captureAgentManifests({ image: { repository: 'localhost:5000/c' } });
    const c3 = (
      bare.flatMap((f) => f.objects).find((o) => (o as { kind: string }).kind === 'DaemonSet') as typeof ds
    ).spec!.template.spec.containers[0]!;
    expect(c3.args.slice(c.args.length)).toEqual(['--image-repository=localhost:5000/c']);
    expect(c3.volumeMounts).toEqual(c.volumeMounts);
  });
});
