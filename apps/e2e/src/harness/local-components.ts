// The steps that start the local control plane's components, in order: the PKI and kubeconfigs,
// etcd, kube-apiserver (each waited for before the next), then kube-controller-manager,
// kube-scheduler and kwok with its fake nodes (started together; see local-readiness.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import type { Clients } from './kube.ts';
import { dies, httpOk, httpsGet, type Tls, type Wait } from './local-readiness.ts';
import type { Run } from './local-run.ts';
import { kwokStagesDir } from './paths.ts';
import { createPki, type Pki, writeKubeconfig } from './pki.ts';
import type { Started } from './procs.ts';
import { waitFor } from './wait.ts';

export const SERVICE_CIDR = '10.0.0.0/24';
export const SERVICE_IP = '10.0.0.1';
export const POD_CIDR = '10.244.0.0/16';
export const FAKE_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
const CONTROLLERS = [
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'namespace-controller',
  // Removes the node.kubernetes.io/not-ready taint admission puts on new nodes once they are
  // Ready (kwok renews their leases, so they stay Ready). No taint-eviction-controller: a slow
  // machine must not get test pods evicted.
  'node-lifecycle-controller',
  'garbage-collector-controller',
  'replicaset-controller',
  'deployment-controller',
  'statefulset-controller',
  // DaemonSets: the capture agent runs as one (on the real node only: its node selector).
  'daemonset-controller',
  'job-controller',
  'pod-garbage-collector-controller',
  'clusterrole-aggregation-controller',
  'root-ca-certificate-publisher-controller',
  // EndpointSlices for Services: kube-proxy routes the real node's Services (the webhook's) by them.
  'endpointslice-controller',
  // PodDisruptionBudget status, which the eviction API (a drain) decides by.
  'disruption-controller',
  // Type-checks ValidatingAdmissionPolicies against the resources' schemas (status.typeChecking),
  // as every real cluster does; the policies suite asserts there is no warning.
  'validatingadmissionpolicy-status-controller',
  // Reads /scale of HPA targets (PodPool, PodClaimSet); the pool-scale suite checks it resolves them.
  'horizontal-pod-autoscaler-controller',
];

/** The run's certificates, the admin's TLS material and the components' kubeconfigs. */
export interface RunPki {
  pki: Pki;
  /** The admin identity, to probe the API server before any client exists. */
  adminTls: Tls;
  kubeconfigs: { controllerManager: string; scheduler: string; kwok: string };
}

/** A fresh CA and certificates (pki.ts), and a kubeconfig per identity in the state directory. */
export async function createRunPki(run: Run, node?: { name: string; ip: string }): Promise<RunPki> {
  const pki = await createPki(join(run.stateDir, 'pki'), {
    serviceIP: SERVICE_IP,
    ...(node ? { node } : {}),
  });
  const adminTls: Tls = {
    ca: readFileSync(pki.caCert),
    cert: readFileSync(pki.identities.admin.cert),
    key: readFileSync(pki.identities.admin.key),
  };
  const kubeconfig = (name: string, id: keyof Pki['identities']) =>
    writeKubeconfig(join(run.stateDir, name), {
      server: run.server,
      caCert: pki.caCert,
      identity: pki.identities[id],
      user: pki.identities[id].user,
    });
  kubeconfig('admin.kubeconfig', 'admin');
  kubeconfig('user.kubeconfig', 'user');
  return {
    pki,
    adminTls,
    kubeconfigs: {
      controllerManager: kubeconfig('kube-controller-manager.kubeconfig', 'controllerManager'),
      scheduler: kubeconfig('kube-scheduler.kubeconfig', 'scheduler'),
      kwok: kubeconfig('kwok.kubeconfig', 'kwok'),
    },
  };
}

/** Starts etcd and waits for its /health. */
export async function startEtcd(run: Run, wait: Wait): Promise<void> {
  const { etcd: port, etcdPeer } = run.ports;
  const etcd = run.start(
    'etcd',
    [
      `-data-dir=${join(run.stateDir, 'etcd')}`,
      `-listen-client-url=http://127.0.0.1:${port}`,
      `-listen-peer-url=http://127.0.0.1:${etcdPeer}`,
    ],
    `http://127.0.0.1:${port}/health`,
  );
  await Promise.race([
    dies(etcd),
    waitFor('etcd /health', () => httpOk(`http://127.0.0.1:${port}/health`), {
      timeoutMs: wait.timeoutMs,
      signal: wait.signal,
    }),
  ]);
}

/**
 * Starts kube-apiserver (RBAC, service-account keys) and waits for its /readyz. Loopback only,
 * unless the run has a real node (`nodeIP`): then pods must reach it through the `kubernetes`
 * Service, so it listens on every address and advertises the node's, and it talks to the kubelet
 * (logs, exec, the checkpoint API through the node proxy) with the admin's certificate.
 */
export async function startApiserver(
  run: Run,
  { pki, adminTls }: RunPki,
  wait: Wait,
  nodeIP?: string,
): Promise<void> {
  const listen = nodeIP
    ? [
        '--bind-address=0.0.0.0',
        `--advertise-address=${nodeIP}`,
        `--kubelet-client-certificate=${pki.identities.admin.cert}`,
        `--kubelet-client-key=${pki.identities.admin.key}`,
        '--kubelet-preferred-address-types=InternalIP',
      ]
    : [
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        // Loopback may not be advertised through the endpoints of the `kubernetes` Service.
        '--endpoint-reconciler-type=none',
      ];
  const apiserver = run.start(
    'kube-apiserver',
    [
      `--etcd-servers=http://127.0.0.1:${run.ports.etcd}`,
      ...listen,
      `--secure-port=${run.ports.apiserver}`,
      `--tls-cert-file=${pki.serving.cert}`,
      `--tls-private-key-file=${pki.serving.key}`,
      `--client-ca-file=${pki.caCert}`,
      '--authorization-mode=Node,RBAC',
      `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
      `--service-account-key-file=${pki.saPub}`,
      `--service-account-signing-key-file=${pki.saKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--allow-privileged=true',
      // /debug/pprof for `go tool pprof` when a benchmark needs to see where the server's CPU goes.
      `--profiling=${process.env.CLAIMKIT_APISERVER_PROFILING === '1'}`,
      `--cert-dir=${join(run.stateDir, 'apiserver')}`,
      '--v=1',
    ],
    `${run.server}/readyz`,
  );
  await Promise.race([
    dies(apiserver),
    waitFor(
      'kube-apiserver /readyz',
      async () => (await httpsGet(`${run.server}/readyz`, adminTls)).status === 200,
      { timeoutMs: wait.timeoutMs, intervalMs: 250, signal: wait.signal },
    ),
  ]);
}

/** Starts kube-controller-manager with the controllers the suites rely on (not waited for). */
export function startControllerManager(run: Run, { pki, kubeconfigs }: RunPki): Started {
  const kubeconfig = kubeconfigs.controllerManager;
  return run.start(
    'kube-controller-manager',
    [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${run.ports.controllerManager}`,
      `--cert-dir=${join(run.stateDir, 'kube-controller-manager')}`,
      '--leader-elect=false',
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${pki.saKey}`,
      `--root-ca-file=${pki.caCert}`,
      `--cluster-cidr=${POD_CIDR}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      `--controllers=${CONTROLLERS.join(',')}`,
      // An HPA is first read within 5 s instead of 15 s (the suite waits for its conditions).
      '--horizontal-pod-autoscaler-sync-period=5s',
      '--profiling=false',
      '--v=1',
    ],
    `https://127.0.0.1:${run.ports.controllerManager}/healthz`,
  );
}

/** Starts kube-scheduler (not waited for). */
export function startScheduler(run: Run, { kubeconfigs }: RunPki): Started {
  const kubeconfig = kubeconfigs.scheduler;
  return run.start(
    'kube-scheduler',
    [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${run.ports.scheduler}`,
      `--cert-dir=${join(run.stateDir, 'kube-scheduler')}`,
      '--leader-elect=false',
      '--profiling=false',
      '--v=1',
    ],
    `https://127.0.0.1:${run.ports.scheduler}/healthz`,
  );
}

/** Starts kwok with the stages of controlplane/kwok-stages, for the nodes annotated as fake. */
export function startKwok(run: Run, { kubeconfigs }: RunPki): Started {
  const stages = readdirSync(kwokStagesDir)
    .filter((n) => n.endsWith('.yaml'))
    .sort()
    .map((n) => join(kwokStagesDir, n));
  return run.start(
    'kwok',
    [
      `--kubeconfig=${kubeconfigs.kwok}`,
      ...stages.map((s) => `--config=${s}`),
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${FAKE_NODE_ANNOTATION}=fake`,
      `--cidr=${POD_CIDR}`,
      '--node-ip=10.240.0.1',
      '--node-lease-duration-seconds=40',
      `--server-address=127.0.0.1:${run.ports.kwok}`,
    ],
    `http://127.0.0.1:${run.ports.kwok}/healthz`,
  );
}

/** Creates the fake nodes kwok plays (kwok-node-0 ...); returns their names. */
export async function createFakeNodes(admin: Clients, count: number): Promise<string[]> {
  const nodes = Array.from({ length: count }, (_, i) => `kwok-node-${i}`);
  for (const name of nodes) {
    const body: V1Node = {
      metadata: {
        name,
        annotations: { [FAKE_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          type: 'kwok',
        },
      },
    };
    await admin.core.createNode({ body });
  }
  return nodes;
}
