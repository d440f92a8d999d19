// The local provider: a real control plane from binaries built out of Go modules (see
// apps/e2e/controlplane): etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
// with fake nodes. No Docker, no root, loopback only; one directory per run holds certificates,
// kubeconfigs, logs, etcd data and the pid file that lets anyone clean up after a crash.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { controlPlaneVersions, ensureBinaries } from './binaries.ts';
import { installCrds, makeClients } from './kube.ts';
import { crdDir as defaultCrdDir, kwokStagesDir, runsDir } from './paths.ts';
import { createPki, E2E_USER, type Pki, writeKubeconfig } from './pki.ts';
import { freePorts } from './ports.ts';
import {
  killAll,
  PID_FILE,
  type PidFile,
  type ProcRecord,
  reapRuns,
  type Started,
  signalAll,
  startProc,
  tail,
  writePidFile,
} from './procs.ts';
import type { ClusterHandle } from './types.ts';
import { waitFor } from './wait.ts';

export interface LocalClusterOptions {
  /** Number of kwok fake nodes (kwok-node-0 ...). Default 2. */
  nodes?: number;
  /** Keep running after this process exits (`pnpm cluster up`): no exit hooks, no watchdog. */
  persistent?: boolean;
  /** Directory of manifests to apply (CRDs are waited for); false skips. Default deploy/crds. */
  crdDir?: string | false;
  /** Progress messages. Default: stderr. */
  log?: (msg: string) => void;
  /** Keep the state directory (logs, certificates) after stop. Default: CLAIMKIT_E2E_KEEP_STATE=1. */
  keepState?: boolean;
  /** Per-component readiness timeout. Default 120 s. */
  timeoutMs?: number;
}

export interface LocalCluster extends ClusterHandle {
  provider: 'local';
  stateDir: string;
  binDir: string;
  kubernetesVersion: string;
  /** Names of the fake nodes. */
  nodes: string[];
  /** Wall-clock milliseconds: binaries (build or cache hit) and control plane start. */
  timings: { binariesMs: number; startMs: number };
}

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
  'job-controller',
  'pod-garbage-collector-controller',
  'clusterrole-aggregation-controller',
  'root-ca-certificate-publisher-controller',
  // Type-checks ValidatingAdmissionPolicies against the resources' schemas (status.typeChecking),
  // as every real cluster does; the policies suite asserts there is no warning.
  'validatingadmissionpolicy-status-controller',
];

interface Tls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** GET over HTTPS with our CA (or none: components' self-signed health endpoints). */
function httpsGet(url: string, tls?: Tls): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'GET', timeout: 5_000, ...(tls ?? { rejectUnauthorized: false }), agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function httpOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return res.ok;
  } catch {
    return false;
  }
}

/** Rejects as soon as a started component exits (it should run until stopped). */
function dies(s: Started): Promise<never> {
  return s.exited.then(({ code, signal }) => {
    throw new Error(
      `${s.rec.name} exited (code ${code}, signal ${signal}) during startup; last log lines of ${s.logPath}:\n${tail(s.logPath)}`,
    );
  });
}

function startWatchdog(stateDir: string): void {
  // A detached helper that outlives us: if this process dies without stopping the cluster (a
  // SIGKILLed test runner), it kills the recorded process groups and removes the state dir.
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, 'watchdog.ts'), String(process.pid), stateDir],
    {
      detached: true,
      stdio: 'ignore',
    },
  );
  child.unref();
}

export async function startLocalCluster(opts: LocalClusterOptions = {}): Promise<LocalCluster> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`[e2e:local] ${m}\n`));
  const base = runsDir();
  mkdirSync(base, { recursive: true });
  for (const dir of await reapRuns(base)) log(`cleaned up a leftover run: ${dir}`);

  const t0 = Date.now();
  const binDir = await ensureBinaries();
  const binariesMs = Date.now() - t0;

  let lastError: unknown;
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      const cluster = await startOnce(binDir, base, opts, log);
      cluster.timings.binariesMs = binariesMs;
      return cluster;
    } catch (e) {
      lastError = e;
      // A port picked as free can be taken before the component binds it; try again once.
      if (!(e instanceof Error && /address already in use/i.test(e.message))) break;
      log(`port clash, retrying: ${e.message.split('\n')[0]}`);
    }
  }
  throw lastError;
}

async function startOnce(
  binDir: string,
  base: string,
  opts: LocalClusterOptions,
  log: (msg: string) => void,
): Promise<LocalCluster> {
  const t0 = Date.now();
  const persistent = opts.persistent ?? false;
  const keepState = opts.keepState ?? process.env.CLAIMKIT_E2E_KEEP_STATE === '1';
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const nodeCount = opts.nodes ?? 2;
  const stateDir = mkdtempSync(join(base, persistent ? 'up-' : 'run-'));
  const logDir = join(stateDir, 'logs');
  mkdirSync(logDir);
  const [etcdPort, etcdPeerPort, apiPort, kcmPort, schedPort, kwokPort] = await freePorts(6);
  const server = `https://127.0.0.1:${apiPort}`;
  const kubeconfigPath = join(stateDir, 'admin.kubeconfig');
  const userKubeconfigPath = join(stateDir, 'user.kubeconfig');
  const procs: ProcRecord[] = [];
  const pidFile: PidFile = {
    owner: process.pid,
    persistent,
    createdAt: new Date().toISOString(),
    stateDir,
    kubeconfigPath,
    userKubeconfigPath,
    server,
    procs,
  };
  writePidFile(stateDir, pidFile);

  const onExit = () => signalAll(procs);
  const onSignal = (sig: NodeJS.Signals) => {
    signalAll(procs);
    // Nobody else handles this signal: restore the default behaviour (terminate).
    if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  // A persistent cluster (`cluster up`) outlives this process once it is up, but not a start that
  // is interrupted half-way: the handlers are there until startOnce returns.
  if (!persistent) startWatchdog(stateDir);
  process.on('exit', onExit);
  for (const s of signals) process.once(s, onSignal);
  const detach = () => {
    process.off('exit', onExit);
    for (const s of signals) process.off(s, onSignal);
  };

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await killAll(procs);
      detach();
      if (keepState) rmSync(join(stateDir, PID_FILE), { force: true });
      else rmSync(stateDir, { recursive: true, force: true });
    })();
    return stopped;
  };

  const start = (name: string, args: string[]): Started => {
    const s = startProc(name, join(binDir, name), args, logDir, stateDir);
    procs.push(s.rec);
    writePidFile(stateDir, pidFile);
    return s;
  };

  let controlPlaneUp = false;
  // Stops the polling loops of a failed start (they would otherwise run on until their deadline).
  const abort = new AbortController();
  try {
    const pki: Pki = await createPki(join(stateDir, 'pki'), { serviceIP: SERVICE_IP });
    const tls: Tls = {
      ca: readFileSync(pki.caCert),
      cert: readFileSync(pki.identities.admin.cert),
      key: readFileSync(pki.identities.admin.key),
    };
    const kubeconfig = (name: string, id: keyof Pki['identities']) =>
      writeKubeconfig(join(stateDir, name), {
        server,
        caCert: pki.caCert,
        identity: pki.identities[id],
        user: pki.identities[id].user,
      });
    kubeconfig('admin.kubeconfig', 'admin');
    kubeconfig('user.kubeconfig', 'user');
    const kcmKubeconfig = kubeconfig('kube-controller-manager.kubeconfig', 'controllerManager');
    const schedKubeconfig = kubeconfig('kube-scheduler.kubeconfig', 'scheduler');
    const kwokKubeconfig = kubeconfig('kwok.kubeconfig', 'kwok');

    // etcd
    const etcd = start('etcd', [
      `-data-dir=${join(stateDir, 'etcd')}`,
      `-listen-client-url=http://127.0.0.1:${etcdPort}`,
      `-listen-peer-url=http://127.0.0.1:${etcdPeerPort}`,
    ]);
    await Promise.race([
      dies(etcd),
      waitFor('etcd /health', () => httpOk(`http://127.0.0.1:${etcdPort}/health`), {
        timeoutMs,
        signal: abort.signal,
      }),
    ]);
    log(`etcd ready on 127.0.0.1:${etcdPort}`);

    // kube-apiserver
    const apiserver = start('kube-apiserver', [
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      // Loopback may not be advertised through the endpoints of the `kubernetes` Service.
      '--endpoint-reconciler-type=none',
      `--secure-port=${apiPort}`,
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
      `--cert-dir=${join(stateDir, 'apiserver')}`,
      '--v=1',
    ]);
    await Promise.race([
      dies(apiserver),
      waitFor(
        'kube-apiserver /readyz',
        async () => (await httpsGet(`${server}/readyz`, tls)).status === 200,
        { timeoutMs, intervalMs: 250, signal: abort.signal },
      ),
    ]);
    log(`kube-apiserver ready at ${server}`);

    // controller-manager, scheduler and kwok start together.
    const kcm = start('kube-controller-manager', [
      `--kubeconfig=${kcmKubeconfig}`,
      `--authentication-kubeconfig=${kcmKubeconfig}`,
      `--authorization-kubeconfig=${kcmKubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${kcmPort}`,
      `--cert-dir=${join(stateDir, 'kube-controller-manager')}`,
      '--leader-elect=false',
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${pki.saKey}`,
      `--root-ca-file=${pki.caCert}`,
      `--cluster-cidr=${POD_CIDR}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      `--controllers=${CONTROLLERS.join(',')}`,
      '--profiling=false',
      '--v=1',
    ]);
    const sched = start('kube-scheduler', [
      `--kubeconfig=${schedKubeconfig}`,
      `--authentication-kubeconfig=${schedKubeconfig}`,
      `--authorization-kubeconfig=${schedKubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${schedPort}`,
      `--cert-dir=${join(stateDir, 'kube-scheduler')}`,
      '--leader-elect=false',
      '--profiling=false',
      '--v=1',
    ]);
    const stages = readdirSync(kwokStagesDir)
      .filter((n) => n.endsWith('.yaml'))
      .sort()
      .map((n) => join(kwokStagesDir, n));
    const kwok = start('kwok', [
      `--kubeconfig=${kwokKubeconfig}`,
      ...stages.map((s) => `--config=${s}`),
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${FAKE_NODE_ANNOTATION}=fake`,
      `--cidr=${POD_CIDR}`,
      '--node-ip=10.240.0.1',
      '--node-lease-duration-seconds=40',
      `--server-address=127.0.0.1:${kwokPort}`,
    ]);
    const running = [kcm, sched, kwok].map((s) => {
      const p = dies(s);
      p.catch(() => {}); // also handled when no guard() is waiting (e.g. exits at stop())
      return p;
    });
    const guard = <T>(p: Promise<T>) => Promise.race([p, ...running]);

    const admin = makeClients(kubeconfigPath);
    const nodes = Array.from({ length: nodeCount }, (_, i) => `kwok-node-${i}`);
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
    await guard(
      Promise.all([
        waitFor(
          'kube-controller-manager /healthz',
          () => httpsGet(`https://127.0.0.1:${kcmPort}/healthz`).then((r) => r.status === 200),
          { timeoutMs, intervalMs: 250, signal: abort.signal },
        ),
        waitFor(
          'kube-scheduler /healthz',
          () => httpsGet(`https://127.0.0.1:${schedPort}/healthz`).then((r) => r.status === 200),
          { timeoutMs, intervalMs: 250, signal: abort.signal },
        ),
        waitFor(
          `${nodeCount} fake nodes Ready and untainted`,
          async () => {
            const list = await admin.core.listNode({ labelSelector: 'type=kwok' });
            const ready = list.items.filter(
              (n) =>
                n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
                !n.spec?.taints?.length,
            );
            return ready.length >= nodeCount;
          },
          { timeoutMs, intervalMs: 250, signal: abort.signal },
        ),
        // The service account controller works (pods need the namespace's `default` account).
        waitFor(
          'the default service account',
          () => admin.core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }),
          { timeoutMs, intervalMs: 250, signal: abort.signal },
        ),
      ]),
    );
    log(`controller-manager, scheduler and kwok ready; nodes: ${nodes.join(', ')}`);
    controlPlaneUp = true;

    const crdDir = opts.crdDir ?? defaultCrdDir;
    if (crdDir !== false && existsSync(crdDir)) {
      const crds = await guard(installCrds(admin, crdDir, timeoutMs));
      if (crds.length > 0) log(`CRDs established: ${crds.join(', ')}`);
    }

    const kubernetesVersion = controlPlaneVersions().kubernetes;
    if (persistent) detach();
    return {
      provider: 'local',
      kubeconfigPath,
      userKubeconfigPath,
      userName: E2E_USER,
      server,
      stateDir,
      binDir,
      kubernetesVersion,
      nodes,
      timings: { binariesMs: 0, startMs: Date.now() - t0 },
      stop,
    };
  } catch (e) {
    abort.abort();
    const logs = procs.map(
      (p) => `--- ${p.name} (${join(logDir, `${p.name}.log`)}):\n${tail(join(logDir, `${p.name}.log`), 15)}`,
    );
    await stop();
    // Component logs explain a control plane that did not come up, not a bad manifest.
    if (e instanceof Error && !controlPlaneUp && !e.message.includes('last log lines')) {
      e.message += `\n${logs.join('\n')}`;
    }
    throw e;
  }
}
