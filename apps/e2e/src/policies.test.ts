// The `policies` component on the real API server, with the CRDs and no webhook: core's
// ValidatingAdmissionPolicies, bound to this file's two namespaces. Every case of POLICY_CASES is
// replayed as a dry-run write by the identity it names; a person's direct writes are refused with
// the policy's message (a podName write, an A->B relabel, an inconsistent state) while their
// legitimate writes pass; and the controller, running as the ServiceAccount the policies name, binds,
// migrates and finalizes a claim with every invariant holding.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controllerRules, explainStartError } from '@claimkit/controller';
import {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_MIGRATE,
  API_VERSION,
  admissionPolicies,
  admissionPolicyObjects,
  GROUP,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  POLICY_NAMES,
  type PodClaim,
  VERSION,
} from '@claimkit/core';
import {
  expectedPolicyMessage,
  POLICY_CASES,
  type PolicyCase,
  policyCaseObject,
} from '@claimkit/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectAllInvariants,
  finalizeClaims,
  getOrUndefined,
  kube,
  type RunningController,
  startController,
  until,
} from './controller/helpers.ts';
import { writeServiceAccountKubeconfig } from './harness/identity.ts';
import { failureStatus, makeClients, testPool, type V1Pod, waitFor } from './harness/index.ts';
import { apiMessage, type Clients, isNotFound } from './harness/kube.ts';
import { E2E_USER } from './harness/pki.ts';
import { e2eClients, e2eCluster, useTestNamespace } from './harness/vitest.ts';

const CONTROLLER_SA = 'claimkit-controller';
const GROUP_MEMBER_SA = 'claimkit-e2e-group-member';
const claimsKey = (namespace: string) => ({ group: GROUP, version: VERSION, namespace, plural: 'podclaims' });

async function refusal(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (e) {
    return { code: await failureStatus(Promise.reject(e)), message: apiMessage(e) };
  }
  throw new Error('expected the API server to refuse the write');
}

describe('admission policies on the API server (CRDs + policies, no webhook)', () => {
  const cases = useTestNamespace('policies'); // the cases and a person's writes
  const flows = useTestNamespace('policies-ctl'); // the controller's flows
  const dir = mkdtempSync(join(tmpdir(), 'claimkit-e2e-policies-'));
  let prefix = '';
  let other: Clients;
  let otherName = '';
  let controller: Clients;
  let controllerKubeconfig = '';
  let groupMember: Clients;
  let memberKubeconfig = '';
  let ctl: RunningController | undefined;
  const admin = () => e2eClients();
  const custom = (c: Clients) => c.custom;
  const clusterRole = () => `${prefix}-controller`;

  beforeAll(async () => {
    const a = admin();
    const ns = cases.name;
    prefix = `claimkit-e2e-${ns}`;
    other = e2eClients('user');
    otherName = e2eCluster().userName;

    // The controller's ServiceAccount and a member of the controller group (all ServiceAccounts of
    // the cases namespace), with real tokens; the other user is the harness's non-admin identity.
    for (const name of [CONTROLLER_SA, GROUP_MEMBER_SA]) {
      await a.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name } } });
    }
    controllerKubeconfig = join(dir, 'controller.kubeconfig');
    await writeServiceAccountKubeconfig(a, { namespace: ns, name: CONTROLLER_SA }, controllerKubeconfig);
    controller = makeClients(controllerKubeconfig);
    memberKubeconfig = join(dir, 'member.kubeconfig');
    await writeServiceAccountKubeconfig(a, { namespace: ns, name: GROUP_MEMBER_SA }, memberKubeconfig);
    groupMember = makeClients(memberKubeconfig);

    // RBAC: everyone may write pods and claims in the cases namespace (the policies decide);
    // the controller gets its ClusterRole in the flows namespace.
    await a.rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: 'writer' },
        rules: [
          {
            apiGroups: [''],
            resources: ['pods', 'pods/status'],
            verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
          },
          {
            apiGroups: [GROUP],
            resources: ['podclaims', 'podclaims/status'],
            verbs: ['get', 'list', 'create', 'update', 'patch'],
          },
        ],
      },
    });
    await a.rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: 'writer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'writer' },
        subjects: [
          { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: otherName },
          { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `system:serviceaccounts:${ns}` },
        ],
      },
    });
    await a.rbac.createClusterRole({
      body: { metadata: { name: clusterRole() }, rules: controllerRules() as never },
    });
    await a.rbac.createNamespacedRoleBinding({
      namespace: flows.name,
      body: {
        metadata: { name: 'controller' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole() },
        // The group member runs a controller too, with this namespaced role and no Node read.
        subjects: [
          { kind: 'ServiceAccount', name: CONTROLLER_SA, namespace: ns },
          { kind: 'ServiceAccount', name: GROUP_MEMBER_SA, namespace: ns },
        ],
      },
    });
    // Nodes are cluster-scoped (the pool's serving check reads them): only that part cluster-wide.
    await a.rbac.createClusterRole({
      body: {
        metadata: { name: `${clusterRole()}-nodes` },
        rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }],
      },
    });
    await a.rbac.createClusterRoleBinding({
      body: {
        metadata: { name: `${clusterRole()}-nodes` },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: `${clusterRole()}-nodes`,
        },
        subjects: [{ kind: 'ServiceAccount', name: CONTROLLER_SA, namespace: ns }],
      },
    });

    // The objects the UPDATE cases start from, written before the policies exist (some are
    // inconsistent on purpose).
    for (const [i, c] of POLICY_CASES.entries()) {
      if (c.operation !== 'UPDATE') continue;
      const body = policyCaseObject(c, 'old', { namespace: ns, name: `case-${i}` });
      if (c.policy === 'pool-pod-labels')
        await a.core.createNamespacedPod({ namespace: ns, body: body as V1Pod });
      else {
        const created = (await custom(a).createNamespacedCustomObject({ ...claimsKey(ns), body })) as object;
        // The binding is status: written through its subresource (a create drops status).
        const status = (body as { status?: object }).status;
        if (status)
          await custom(a).replaceNamespacedCustomObjectStatus({
            ...claimsKey(ns),
            name: `case-${i}`,
            body: { ...created, status },
          });
      }
    }

    for (const o of admissionPolicyObjects({
      namePrefix: prefix,
      controllerServiceAccount: { namespace: ns, name: CONTROLLER_SA },
      controllerGroups: [`system:serviceaccounts:${ns}`],
      namespaceSelector: {
        matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [ns, flows.name] }],
      },
    })) {
      await a.objects.create(o as never);
    }
    // The API server enforces a new policy once its informers have it: wait until a write each
    // policy must refuse is refused, in both namespaces.
    await waitFor(
      'the API server to enforce the policies',
      async () => {
        for (const namespace of [ns, flows.name]) {
          const pod = refusal(
            a.core.createNamespacedPod({
              namespace,
              dryRun: 'All',
              body: {
                metadata: { name: 'probe', labels: { [LABEL_POOL]: 'web', [LABEL_STATE]: 'NoSuchState' } },
                spec: { containers: [{ name: 'main', image: 'registry.example/claimkit/app:1' }] },
              },
            }),
          );
          const claim = refusal(
            custom(a).createNamespacedCustomObject({
              ...claimsKey(namespace),
              dryRun: 'All',
              body: {
                apiVersion: API_VERSION,
                kind: 'PodClaim',
                metadata: { name: 'probe' },
                spec: { poolName: 'web', podName: 'x' },
              },
            }),
          );
          // Both settled before looking at either (no rejection is left unhandled).
          const [p, cl] = await Promise.all([pod.catch(() => undefined), claim.catch(() => undefined)]);
          if (!p?.message.includes(`${prefix}-pool-pod-labels`)) return false;
          if (!cl?.message.includes(`${prefix}-podclaim-writers`)) return false;
        }
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  }, 180_000);

  afterAll(async () => {
    if (ctl) await finalizeClaims(flows.name).catch(() => {});
    await ctl?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (!prefix) return;
    const a = admin();
    // Cluster-scoped: removed here (bindings first), the namespaces by useTestNamespace.
    for (const o of admissionPolicyObjects({ namePrefix: prefix }).reverse()) {
      await a.objects.delete(o as never).catch((e) => {
        if (!isNotFound(e)) throw e;
      });
    }
    await a.rbac.deleteClusterRoleBinding({ name: `${clusterRole()}-nodes` }).catch((e) => {
      if (!isNotFound(e)) throw e;
    });
    for (const name of [clusterRole(), `${clusterRole()}-nodes`]) {
      await a.rbac.deleteClusterRole({ name }).catch((e) => {
        if (!isNotFound(e)) throw e;
      });
    }
  });

  type TypeChecking = { expressionWarnings?: { fieldRef: string; warning: string }[] };
  /** The API server's type check of a policy (kube-controller-manager writes it to the status). */
  async function typeChecking(name: string): Promise<TypeChecking> {
    return waitFor(
      `the type check of ${name}`,
      async () => {
        const p = (await admin().objects.read({
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicy',
          metadata: { name },
        } as never)) as {
          metadata: { generation: number };
          status?: { observedGeneration?: number; typeChecking?: TypeChecking };
        };
        return p.status?.observedGeneration === p.metadata.generation ? p.status.typeChecking : undefined;
      },
      { timeoutMs: 30_000 },
    );
  }

  it('the API server type-checks every expression without a warning', async () => {
    for (const name of POLICY_NAMES) {
      expect((await typeChecking(`${prefix}-${name}`)).expressionWarnings ?? [], name).toEqual([]);
    }
    // The check does report a mistake (in a validation; variables only lend their types): the
    // same policy with a misspelt field, never bound.
    const { policy } = admissionPolicies({ namePrefix: `${prefix}-typo` })['pool-pod-labels'];
    policy.spec.validations = [
      ...policy.spec.validations,
      { expression: "object.spec.nodeNmae == ''", message: 'typo', reason: 'Invalid' },
    ];
    await admin().objects.create(policy as never);
    try {
      const warnings = (await typeChecking(policy.metadata.name)).expressionWarnings ?? [];
      expect(warnings.map((w) => `${w.fieldRef}: ${w.warning}`).join('\n')).toMatch(
        new RegExp(
          `spec\\.validations\\[${policy.spec.validations.length - 1}\\]\\.expression: .*nodeNmae`,
          's',
        ),
      );
    } finally {
      await admin().objects.delete(policy as never);
    }
  });

  /** The case's write, dry run, by the identity it names. */
  async function write(c: PolicyCase, i: number): Promise<unknown> {
    const ns = cases.name;
    const who =
      c.writer === 'controller' ? controller : c.writer === 'controller-group' ? groupMember : other;
    const key = { namespace: ns, name: `case-${i}` };
    const want = policyCaseObject(c, 'new', key) as {
      metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec: Record<string, unknown>;
    };
    if (c.policy === 'pool-pod-labels') {
      if (c.operation === 'CREATE') {
        return who.core.createNamespacedPod({ namespace: ns, dryRun: 'All', body: want as unknown as V1Pod });
      }
      // Read-modify-replace, retried on 409 (kwok and the scheduler write the pod too).
      for (let attempt = 0; ; attempt++) {
        const pod = await admin().core.readNamespacedPod(key);
        pod.metadata!.labels = want.metadata.labels ?? {};
        pod.metadata!.annotations = want.metadata.annotations ?? {};
        try {
          return await who.core.replaceNamespacedPod({ ...key, dryRun: 'All', body: pod });
        } catch (e) {
          if (attempt < 20 && (await failureStatus(Promise.reject(e))) === 409) continue;
          throw e;
        }
      }
    }
    const api = custom(who);
    if (c.operation === 'CREATE') {
      return api.createNamespacedCustomObject({ ...claimsKey(ns), dryRun: 'All', body: want });
    }
    const cur = (await custom(admin()).getNamespacedCustomObject({ ...claimsKey(ns), name: key.name })) as {
      metadata: Record<string, unknown>;
    };
    if (c.subresource === 'status') {
      return api.replaceNamespacedCustomObjectStatus({
        ...claimsKey(ns),
        name: key.name,
        dryRun: 'All',
        body: { ...cur, status: (want as { status?: object }).status ?? {} },
      });
    }
    return api.replaceNamespacedCustomObject({
      ...claimsKey(ns),
      name: key.name,
      dryRun: 'All',
      body: {
        ...cur,
        metadata: { ...cur.metadata, annotations: want.metadata.annotations },
        spec: want.spec,
      },
    });
  }

  it.each(POLICY_CASES.map((c, i) => [c.name, c, i] as const))('case: %s', async (_name, c, i) => {
    if (c.expect.allowed) {
      await write(c, i);
      return;
    }
    const r = await refusal(write(c, i));
    expect(r.message).toContain(`ValidatingAdmissionPolicy '${prefix}-${c.policy}'`);
    expect(r.message).toContain(expectedPolicyMessage(c, otherName));
    expect(r.code).toBe(c.expect.reason === 'Forbidden' ? 403 : 422);
  });

  it("refuses a person's status.podName write with a clear message, and lets their other edits through", async () => {
    const ns = cases.name;
    const api = custom(other);
    await api.createNamespacedCustomObject({
      ...claimsKey(ns),
      body: {
        apiVersion: API_VERSION,
        kind: 'PodClaim',
        metadata: { name: 'mine' },
        spec: { poolName: 'web' },
      },
    });
    const cur = (await api.getNamespacedCustomObject({ ...claimsKey(ns), name: 'mine' })) as PodClaim;
    const r = await refusal(
      api.replaceNamespacedCustomObjectStatus({
        ...claimsKey(ns),
        name: 'mine',
        body: { ...cur, status: { podName: 'pool-x' } },
      }),
    );
    expect(r.code).toBe(403);
    expect(r.message).toBe(
      `HTTP 403: podclaims.claimkit.dev "mine" is forbidden: ValidatingAdmissionPolicy '${prefix}-podclaim-writers' with binding '${prefix}-podclaim-writers' denied request: status.podName: is written only by the claimkit controller, not by "${otherName}"`,
    );
    // Annotations (e.g. a migration request) and labels are theirs to write.
    const edited = (await api.replaceNamespacedCustomObject({
      ...claimsKey(ns),
      name: 'mine',
      body: {
        ...cur,
        metadata: { ...cur.metadata, annotations: { [ANNOTATION_MIGRATE]: 'e2e' }, labels: { team: 'a' } },
      },
    })) as PodClaim;
    expect(edited.metadata.annotations?.[ANNOTATION_MIGRATE]).toBe('e2e');
    // The binding's old place is closed to everyone, the controller included (the CRD's CEL): a
    // controller still on the previous release cannot bind through it.
    const old = await refusal(
      custom(controller).replaceNamespacedCustomObject({
        ...claimsKey(ns),
        name: 'mine',
        body: { ...edited, spec: { ...edited.spec, podName: 'pool-x' } },
      }),
    );
    expect(old.code).toBe(422);
    expect(old.message).toContain('spec.podName is no longer written: the binding is in status');
    // The same status write as the controller's ServiceAccount passes.
    const bound = (await custom(controller).replaceNamespacedCustomObjectStatus({
      ...claimsKey(ns),
      name: 'mine',
      body: { ...edited, status: { podName: 'pool-x' } },
    })) as PodClaim;
    expect(bound.status?.podName).toBe('pool-x');
  });

  it('refuses an A->B relabel and an inconsistent state, and allows the same change in two writes', async () => {
    const ns = cases.name;
    const core = other.core;
    // Only the controller names a claim on a pool pod, so the pod labelled for a is its doing.
    const controllerCore = controller.core;
    const labels = (claim?: string, state = 'Bound') => ({
      [LABEL_POOL]: 'web',
      [LABEL_STATE]: state,
      ...(claim ? { [LABEL_CLAIMED_BY]: claim } : {}),
    });
    await controllerCore.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: {
          name: 'pool-1',
          labels: labels('a'),
          annotations: { [ANNOTATION_CLAIMED_BY_UID]: 'uid-a' },
        },
        spec: { containers: [{ name: 'main', image: 'registry.example/claimkit/app:1' }] },
      },
    });
    /** Read-modify-replace as the other user (of the pod, or of its status subresource), retried on 409. */
    const update = async (mutate: (p: V1Pod) => void, subresource?: 'status', as = core): Promise<V1Pod> => {
      for (let attempt = 0; ; attempt++) {
        const pod = await as.readNamespacedPod({ namespace: ns, name: 'pool-1' });
        mutate(pod);
        const req = { namespace: ns, name: 'pool-1', body: pod };
        try {
          return await (subresource ? as.replaceNamespacedPodStatus(req) : as.replaceNamespacedPod(req));
        } catch (e) {
          if (attempt < 20 && (await failureStatus(Promise.reject(e))) === 409) continue;
          throw e;
        }
      }
    };
    const relabel = await refusal(
      update((p) => {
        p.metadata!.labels = labels('b');
        p.metadata!.annotations = { [ANNOTATION_CLAIMED_BY_UID]: 'uid-b' };
      }),
    );
    expect(relabel.code).toBe(403);
    expect(relabel.message).toContain(
      `ValidatingAdmissionPolicy '${prefix}-pool-pod-labels' with binding '${prefix}-pool-pod-labels' denied request: metadata.labels[${LABEL_CLAIMED_BY}]: a pod is never relabelled from one claim to another in a single write (a -> b); the label must be removed first`,
    );
    // The status subresource can change a pod's labels too (the API server keeps only the spec).
    const viaStatus = await refusal(
      update((p) => {
        p.metadata!.labels = labels('b');
        p.metadata!.annotations = { [ANNOTATION_CLAIMED_BY_UID]: 'uid-b' };
      }, 'status'),
    );
    expect(viaStatus.message).toContain(
      'a pod is never relabelled from one claim to another in a single write',
    );

    // A person may unlabel; naming claim b is the controller's alone (else a pod is stolen in two
    // writes); the controller's two writes pass. Unrelated metadata edits by the person pass too.
    await update((p) => {
      p.metadata!.labels = labels();
      p.metadata!.annotations = {};
    });
    const labelB = (p: V1Pod) => {
      p.metadata!.labels = labels('b');
      p.metadata!.annotations = { [ANNOTATION_CLAIMED_BY_UID]: 'uid-b' };
    };
    const theft = await refusal(update(labelB));
    expect(theft.code).toBe(403);
    expect(theft.message).toContain(
      `metadata.labels[${LABEL_CLAIMED_BY}]: is set only by the claimkit controller, not by "${E2E_USER}"; anyone may remove it`,
    );
    await update(labelB, undefined, controllerCore);
    const edited = await update((p) => {
      p.metadata!.labels = { ...p.metadata!.labels, app: 'web' };
      p.metadata!.annotations = { ...p.metadata!.annotations, note: 'hello' };
    });
    expect(edited.metadata?.labels?.[LABEL_CLAIMED_BY]).toBe('b');

    const idle = await refusal(
      update((p) => {
        p.metadata!.labels = { ...p.metadata!.labels, [LABEL_STATE]: 'Idle' };
      }),
    );
    expect(idle.code).toBe(422);
    expect(idle.message).toContain(
      `metadata.labels[${LABEL_CLAIMED_BY}]: an Idle pod must not be claimed (claimed-by b); set the state first or remove the label`,
    );
    const noUid = await refusal(
      update((p) => {
        p.metadata!.annotations = {};
      }),
    );
    expect(noUid.message).toContain(`is required while ${LABEL_CLAIMED_BY} is set (b)`);
  });

  it("the controller's flows pass under the policies: bind, migrate with a drain, Lost and rebind, finalize", async () => {
    const n = flows.name;
    // The policies are enforced in this namespace too: a podName write by anyone else is refused.
    const probe = await refusal(
      custom(admin()).createNamespacedCustomObject({
        ...claimsKey(n),
        dryRun: 'All',
        body: {
          apiVersion: API_VERSION,
          kind: 'PodClaim',
          metadata: { name: 'x' },
          spec: { poolName: 'web', podName: 'p' },
        },
      }),
    );
    expect(probe.message).toContain(`${prefix}-podclaim-writers`);

    ctl = await startController(n, { kubeconfig: controllerKubeconfig });
    const c = kube();
    // The source pod drains (state Draining, still claimed) before it is released.
    const pool = testPool(n, 'web', { minIdle: 2, maxPods: 10, drainSeconds: 2 });
    await c.create(pool);
    await c.create({
      apiVersion: API_VERSION,
      kind: 'PodClaim',
      metadata: { name: 'app', namespace: n },
      spec: { poolName: 'web' },
    } as PodClaim);
    const get = () => getOrUndefined(c.get('PodClaim', { namespace: n, name: 'app' }));
    const bound = await until(
      'the claim bound',
      async () => {
        const x = await get();
        return x?.status?.phase === 'Bound' && x.status?.podName ? x : undefined;
      },
      60_000,
    );
    const first = bound!.status!.podName!;
    const pod = await c.get('Pod', { namespace: n, name: first });
    expect(pod.metadata.labels?.[LABEL_CLAIMED_BY]).toBe('app');

    await c.patch(
      'PodClaim',
      { namespace: n, name: 'app' },
      { metadata: { annotations: { [ANNOTATION_MIGRATE]: 'e2e' } } },
    );
    const migrated = await until(
      'the migration finished',
      async () => {
        const x = await get();
        return x?.status?.podName &&
          x.status?.podName !== first &&
          !x.status?.sourcePod &&
          x.status?.phase === 'Bound'
          ? x
          : undefined;
      },
      60_000,
    );
    expect(migrated!.metadata.annotations?.[ANNOTATION_MIGRATE]).toBeUndefined();
    await expectAllInvariants(n);

    // Its pod is deleted: the controller clears podName and nodeName (Lost), then binds again.
    const second = migrated!.status!.podName!;
    await c.delete('Pod', { namespace: n, name: second }, { gracePeriodSeconds: 0 });
    await until(
      'the claim bound again',
      async () => {
        const x = await get();
        return x?.status?.phase === 'Bound' && x.status?.podName && x.status?.podName !== second
          ? x
          : undefined;
      },
      60_000,
    );
    await expectAllInvariants(n);

    await c.delete('PodClaim', { namespace: n, name: 'app' });
    await until('the claim finalized', async () => (await get()) === undefined);
    await until('no pod left claimed', async () =>
      (await c.list('Pod', { namespace: n })).items.every((p) => !p.metadata.labels?.[LABEL_CLAIMED_BY]),
    );
    await expectAllInvariants(n);
  });
  it('a controller without a cluster-wide Node read: it says to grant one or pass --no-watch-nodes, and with --no-watch-nodes it binds', async () => {
    const n = flows.name;
    // The flows' controller goes, so what binds below is the one without Node reads.
    await ctl?.stop();
    ctl = undefined;
    let refused: unknown;
    try {
      const x = await startController(n, { kubeconfig: memberKubeconfig, identity: 'e2e-nodes-denied' });
      await x.stop();
    } catch (e) {
      refused = e;
    }
    expect(refused, 'the controller started without a Node read').toBeDefined();
    const why = explainStartError(refused);
    expect(why).toContain('may not list and watch nodes');
    expect(why).toContain('--no-watch-nodes');

    ctl = await startController(n, {
      kubeconfig: memberKubeconfig,
      identity: 'e2e-no-nodes',
      watchNodes: false,
    });
    const c = kube();
    await c.create(testPool(n, 'solo', { minIdle: 1, maxPods: 3 }));
    await c.create({
      apiVersion: API_VERSION,
      kind: 'PodClaim',
      metadata: { name: 'solo', namespace: n },
      spec: { poolName: 'solo' },
    } as PodClaim);
    const bound = await until(
      'the claim bound by the controller that watches no Nodes',
      async () => {
        const x = await getOrUndefined(c.get('PodClaim', { namespace: n, name: 'solo' }));
        return x?.status?.phase === 'Bound' && x.status?.podName ? x : undefined;
      },
      60_000,
    );
    const pod = await c.get('Pod', { namespace: n, name: bound!.status!.podName! });
    expect(pod.metadata.labels?.[LABEL_CLAIMED_BY]).toBe('solo');
    await expectAllInvariants(n);
  });
});
