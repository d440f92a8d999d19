// A real node in the local control plane: containerd (with Debian's runc and CNI plugins), a
// kubelet and kube-proxy, joined to the run's API server as node `claimkit-node-0`. Pods on it run
// for real (our own images, imported from OCI archives). Beside it runs an OCI registry (CNCF
// distribution, over TLS with the run's CA) that containerd trusts and pulls from: the capture agent
// pushes checkpoint images there, and a pool's pods are restored from them (containerd 2.3 with
// restore via CreateContainer). The node is tainted, so only
// pods that tolerate it and select it (realNodePlacement) land there; everything else stays on the
// kwok nodes. It needs root, cgroups and iptables (realNodeSupport says what is missing); the
// binaries come from `controlplane/build.sh node`. Stopping and cleaning up: local-node-cleanup.ts.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1Toleration } from '@kubernetes/client-node';
import type { Clients } from './kube.ts';
import type { RunPki } from './local-components.ts';
import { NODE_BRIDGE, NODE_CGROUP_ROOT, nodeStateDir } from './local-node-cleanup.ts';
import { dies, httpOk, type Wait } from './local-readiness.ts';
import type { Run } from './local-run.ts';
import { writeKubeconfig } from './pki.ts';
import { freePorts } from './ports.ts';
import { waitFor } from './wait.ts';

const exec = promisify(execFile);

export const REAL_NODE_NAME = 'claimkit-node-0';
/** The label and the NoSchedule taint that keep everything but chosen pods off the real node. */
export const REAL_NODE_KEY = 'claimkit.dev/node';
export const REAL_NODE_VALUE = 'real';
/** The real node's pod addresses (the kwok nodes use POD_CIDR, 10.244.0.0/16). */
export const REAL_POD_CIDR = '10.245.0.0/24';
/** The sandbox image containerd starts every pod with (built locally, see apps/e2e/images). */
export const SANDBOX_IMAGE = 'localhost/claimkit/pause:3.10-local';

/** The workload image (busybox + ticker), built locally (apps/e2e/images) and imported into the node. */
export const WORKLOAD_IMAGE = 'localhost/claimkit/workload:e2e';

/**
 * Puts a pool's pods on the real node, running `command` in the workload image (default: `ticker`,
 * which counts once a second on stdout).
 */
export function runPoolOnRealNode(
  pool: { spec: { template: { spec?: unknown } } },
  o: { command?: string[]; restartPolicy?: 'Always' | 'OnFailure' | 'Never' } = {},
): void {
  pool.spec.template.spec ??= {};
  const spec = pool.spec.template.spec as { containers?: Record<string, unknown>[] } & Record<
    string,
    unknown
  >;
  Object.assign(spec, realNodePlacement(), { restartPolicy: o.restartPolicy ?? 'Always' });
  spec.containers ??= [{ name: 'main' }];
  const container = spec.containers[0] ?? {};
  Object.assign(container, {
    image: WORKLOAD_IMAGE,
    imagePullPolicy: 'Never',
    command: o.command ?? ['ticker'],
  });
}

/** What a pod spec needs to run on the real node. */
export function realNodePlacement(): { nodeSelector: Record<string, string>; tolerations: V1Toleration[] } {
  return {
    nodeSelector: { [REAL_NODE_KEY]: REAL_NODE_VALUE },
    tolerations: [{ key: REAL_NODE_KEY, operator: 'Equal', value: REAL_NODE_VALUE, effect: 'NoSchedule' }],
  };
}

/** Undefined when this machine can run a real node, else one line naming what is missing. */
export function realNodeSupport(): string | undefined {
  if (process.platform !== 'linux') return `a real node needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0)
    return 'a real node needs root (cgroups, mounts, iptables, network namespaces)';
  if (!existsSync('/sys/fs/cgroup/memory') && !existsSync('/sys/fs/cgroup/cgroup.controllers')) {
    return 'a real node needs cgroups (no /sys/fs/cgroup/memory or cgroup v2 mount)';
  }
  if (!existsSync('/proc/sys/net/bridge'))
    return 'a real node needs the bridge netfilter (no /proc/sys/net/bridge)';
  if (!nodeIP()) return 'a real node needs an IPv4 address other than loopback (none found)';
  return undefined;
}

/** The machine's first global IPv4 address: the node's InternalIP (kubectl logs, node proxy). */
export function nodeIP(): string | undefined {
  if (process.env.CLAIMKIT_NODE_IP) return process.env.CLAIMKIT_NODE_IP;
  try {
    const out = execFileSync('ip', ['-4', '-o', 'addr', 'show', 'scope', 'global'], { encoding: 'utf8' });
    return /inet (\d+\.\d+\.\d+\.\d+)\//.exec(out)?.[1];
  } catch {
    return undefined;
  }
}

export interface RealNode {
  name: string;
  ip: string;
  binDir: string;
  /** containerd's socket (ctr -a SOCKET -n k8s.io ...). */
  containerdSocket: string;
  kubeletPort: number;
  /** Where the kubelet writes checkpoint archives (`<root-dir>/checkpoints`). */
  checkpointDir: string;
  /** The directory of the `criu` the runtime checkpoints with (build-criu.sh); absent: none. */
  criuDir?: string;
  /** The OCI registry beside the node, which its containerd trusts (hosts.toml with the run's CA). */
  registry: RealNodeRegistry;
  /** What `nodeInfo.containerRuntimeVersion` says, e.g. `containerd://v2.3.7`. */
  runtimeVersion: string;
}

export interface RealNodeRegistry {
  /** `<node IP>:<port>`: the host part of image references, reachable from the host and from pods. */
  host: string;
  /** The PEM CA its serving certificate is signed by (the run's CA). */
  caFile: string;
  /** Where it stores blobs and manifests (filesystem driver). */
  dataDir: string;
}

interface NodePorts {
  kubelet: number;
  kubeletHealthz: number;
  proxyHealthz: number;
  proxyMetrics: number;
  registry: number;
  registryDebug: number;
}

/** The distribution registry's configuration (YAML; JSON is YAML). */
function registryConfig(o: { dataDir: string; addr: string; debugAddr: string; cert: string; key: string }) {
  return JSON.stringify(
    {
      version: 0.1,
      log: { level: 'warn', accesslog: { disabled: true } },
      storage: { filesystem: { rootdirectory: o.dataDir }, delete: { enabled: true } },
      http: {
        addr: o.addr,
        // One replica: the secret only signs upload state between requests to this process.
        secret: 'claimkit-e2e-local-registry',
        tls: { certificate: o.cert, key: o.key },
        debug: { addr: o.debugAddr },
      },
      health: { storagedriver: { enabled: true, interval: '10s', threshold: 3 } },
    },
    null,
    2,
  );
}

/** containerd's hosts.toml for the registry: pull and resolve over TLS with the run's CA. */
function registryHostsToml(host: string, caFile: string): string {
  return `server = "https://${host}"
[host."https://${host}"]
  capabilities = ["pull", "resolve"]
  ca = "${caFile}"
`;
}

function containerdConfig(dir: string, socket: string, criuDir: string | undefined): string {
  // The shims (and the runc and CRIU they run) get this PATH; containerd's CRI looks for `criu` in
  // it before it checkpoints.
  const shimPath = [criuDir, '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']
    .filter(Boolean)
    .join(':');
  return `version = 3
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"
[grpc]
  address = "${socket}"
[ttrpc]
  address = "${socket}.ttrpc"
[debug]
  level = "warn"
[plugins."io.containerd.shim.v1.manager"]
  env = ["PATH=${shimPath}"]
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "${SANDBOX_IMAGE}"
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "${dir}/certs.d"
[plugins."io.containerd.cri.v1.runtime"]
  # A checkpoint OCI image as a container's image is restored (CRIU) instead of started: off by
  # default in 2.3.4+ and removed in 2.4.0 (versions.env).
  enable_experimental_restore_via_create = true
  # root here lacks CAP_SYS_RESOURCE: a negative oom_score_adj would fail every sandbox.
  restrict_oom_score_adj = true
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "${dir}/cni/net.d"
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "${runcPath()}"
        SystemdCgroup = false
`;
}

export function runcPath(): string {
  for (const p of ['/usr/sbin/runc', '/usr/bin/runc', '/usr/local/sbin/runc', '/usr/local/bin/runc']) {
    if (existsSync(p)) return p;
  }
  return 'runc';
}

function cniConfig(dir: string): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'claimkit',
      plugins: [
        {
          type: 'bridge',
          bridge: NODE_BRIDGE,
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            dataDir: join(dir, 'cni/ipam'),
            ranges: [[{ subnet: REAL_POD_CIDR }]],
            routes: [{ dst: '0.0.0.0/0' }],
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

function kubeletConfig(o: {
  caCert: string;
  ports: NodePorts;
  socket: string;
  ip: string;
  cert: string;
  key: string;
}) {
  // JSON is YAML: the kubelet reads either.
  return JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: o.ip,
      port: o.ports.kubelet,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: o.ports.kubeletHealthz,
      tlsCertFile: o.cert,
      tlsPrivateKeyFile: o.key,
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: o.caCert },
      },
      authorization: { mode: 'Webhook' },
      containerRuntimeEndpoint: `unix://${o.socket}`,
      // This kind of machine has cgroup v1 hierarchies (kubelet >= 1.35 refuses them by default).
      failCgroupV1: false,
      failSwapOn: false,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: `/${NODE_CGROUP_ROOT}`,
      // The node is a test machine: never evict or garbage-collect the locally imported images.
      evictionHard: { 'memory.available': '1Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      // The suites run imported images (ghcr.io/claimkit/<c>:<version>, never pullable here). Under
      // the default NeverVerifyPreloadedImages, once the kubelet has pulled an image with the same ID
      // under another name (the release e2e pulls the same build from the node's registry), it no
      // longer counts the imported name as preloaded. It then re-verifies by pulling from ghcr.io
      // (ErrImagePull), though containerd still has the image.
      imagePullCredentialsVerificationPolicy: 'NeverVerify',
      registerWithTaints: [{ key: REAL_NODE_KEY, value: REAL_NODE_VALUE, effect: 'NoSchedule' }],
      nodeStatusUpdateFrequency: '4s',
      nodeStatusReportFrequency: '10s',
      syncFrequency: '10s',
      fileCheckFrequency: '20s',
      serializeImagePulls: false,
      resolvConf: '/etc/resolv.conf',
      maxPods: 110,
      containerLogMaxSize: '5Mi',
      protectKernelDefaults: false,
      makeIPTablesUtilChains: false,
      localStorageCapacityIsolation: true,
      shutdownGracePeriod: '0s',
    },
    null,
    2,
  );
}

/** The kubelet's cgroupRoot must exist in every v1 hierarchy (cpuset seeded from the root's). */
function createCgroupRoot(): void {
  const base = '/sys/fs/cgroup';
  for (const h of readdirSync(base)) {
    const dir = join(base, h, NODE_CGROUP_ROOT);
    if (h === 'unified' || !existsSync(join(base, h, 'cgroup.procs'))) continue;
    mkdirSync(dir, { recursive: true });
    if (h === 'cpuset') {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) {
        if (readFileSync(join(dir, f), 'utf8').trim() === '')
          writeFileSync(join(dir, f), readFileSync(join(base, h, f)));
      }
    }
  }
}

/**
 * Starts containerd, imports `images` (OCI archives) into its k8s.io namespace, then the kubelet and
 * kube-proxy, and waits until the node is Ready. Each component is a recorded process of the run
 * (stop, kill and restart like the others, local-control.ts).
 */
export async function startRealNode(
  run: Run,
  { pki }: RunPki,
  { binDir, criuDir }: { binDir: string; criuDir: string | undefined },
  images: string[],
  wait: Wait,
  admin: Clients,
  log: (m: string) => void,
): Promise<RealNode> {
  const ip = nodeIP();
  if (!ip) throw new Error('no IPv4 address for the real node');
  const dir = nodeStateDir(run.stateDir);
  mkdirSync(join(dir, 'cni/net.d'), { recursive: true });
  const [kubelet, kubeletHealthz, proxyHealthz, proxyMetrics, registryPort, registryDebug] = (await freePorts(
    6,
  )) as [number, number, number, number, number, number];
  const ports: NodePorts = {
    kubelet,
    kubeletHealthz,
    proxyHealthz,
    proxyMetrics,
    registry: registryPort,
    registryDebug,
  };
  createCgroupRoot();
  writeFileSync('/proc/sys/net/ipv4/ip_forward', '1');
  writeFileSync('/proc/sys/net/bridge/bridge-nf-call-iptables', '1');

  // The registry (before containerd, which trusts it): every address of the node, the node's
  // serving certificate (the node IP and 127.0.0.1), health on loopback.
  const registryHost = `${ip}:${ports.registry}`;
  const registryDir = join(dir, 'registry');
  mkdirSync(registryDir, { recursive: true });
  const registryCfg = join(dir, 'registry.json');
  writeFileSync(
    registryCfg,
    registryConfig({
      dataDir: registryDir,
      addr: `0.0.0.0:${ports.registry}`,
      debugAddr: `127.0.0.1:${ports.registryDebug}`,
      cert: pki.nodeServing.cert,
      key: pki.nodeServing.key,
    }),
  );
  const registryHealth = `http://127.0.0.1:${ports.registryDebug}/debug/health`;
  const registry = run.start('registry', ['serve', registryCfg], registryHealth, join(binDir, 'registry'));
  mkdirSync(join(dir, 'certs.d', registryHost), { recursive: true });
  writeFileSync(
    join(dir, 'certs.d', registryHost, 'hosts.toml'),
    registryHostsToml(registryHost, pki.caCert),
  );

  // containerd
  const socket = join(dir, 'containerd.sock');
  const cfg = join(dir, 'containerd.toml');
  writeFileSync(cfg, containerdConfig(dir, socket, criuDir));
  writeFileSync(join(dir, 'cni/net.d/10-claimkit.conflist'), cniConfig(dir));
  const containerd = run.start('containerd', ['--config', cfg], undefined, join(binDir, 'containerd'));
  const ctr = (args: string[]) => exec(join(binDir, 'ctr'), ['-a', socket, '-n', 'k8s.io', ...args]);
  await Promise.race([
    dies(containerd),
    waitFor(
      'containerd answering on its socket',
      async () =>
        (await ctr(['version']).then(
          () => true,
          () => false,
        )) || undefined,
      {
        timeoutMs: wait.timeoutMs,
        intervalMs: 200,
        signal: wait.signal,
      },
    ),
  ]);
  await Promise.race([
    dies(registry),
    waitFor(`registry healthy (${registryHealth}, log ${registry.logPath})`, () => httpOk(registryHealth), {
      timeoutMs: wait.timeoutMs,
      intervalMs: 200,
      signal: wait.signal,
    }),
  ]);
  for (const archive of images) {
    const t0 = Date.now();
    await ctr(['images', 'import', '--no-unpack=false', '--snapshotter', 'overlayfs', archive]).catch(
      (e: Error & { stderr?: string }) => {
        throw new Error(`ctr images import ${archive} failed: ${e.stderr ?? e.message}`);
      },
    );
    log(`imported ${archive} into the real node's containerd (${Date.now() - t0} ms)`);
  }

  // kubelet: its own client certificate (system:node:<name>) and a serving certificate for its IP.
  const kubeletKubeconfig = writeKubeconfig(join(dir, 'kubelet.kubeconfig'), {
    server: run.server,
    caCert: pki.caCert,
    identity: pki.identities.node,
    user: pki.identities.node.user,
  });
  const kubeletCfg = join(dir, 'kubelet.json');
  writeFileSync(
    kubeletCfg,
    kubeletConfig({
      caCert: pki.caCert,
      ports,
      socket,
      ip,
      cert: pki.nodeServing.cert,
      key: pki.nodeServing.key,
    }),
  );
  const kubeletProc = run.start(
    'kubelet',
    [
      `--config=${kubeletCfg}`,
      `--kubeconfig=${kubeletKubeconfig}`,
      `--hostname-override=${REAL_NODE_NAME}`,
      `--node-ip=${ip}`,
      `--root-dir=${join(dir, 'kubelet')}`,
      `--cert-dir=${join(dir, 'kubelet-pki')}`,
      `--node-labels=${REAL_NODE_KEY}=${REAL_NODE_VALUE}`,
      '--v=1',
    ],
    `http://127.0.0.1:${kubeletHealthz}/healthz`,
    join(binDir, 'kubelet'),
  );

  // kube-proxy (iptables): Services' cluster IPs work from the host (the API server calling the
  // webhook's Service) and from pods (the controller reaching the API server at 10.0.0.1).
  const proxyKubeconfig = writeKubeconfig(join(dir, 'kube-proxy.kubeconfig'), {
    server: run.server,
    caCert: pki.caCert,
    identity: pki.identities.kubeProxy,
    user: pki.identities.kubeProxy.user,
  });
  const proxy = run.start(
    'kube-proxy',
    [
      `--kubeconfig=${proxyKubeconfig}`,
      `--hostname-override=${REAL_NODE_NAME}`,
      '--proxy-mode=iptables',
      `--cluster-cidr=${REAL_POD_CIDR}`,
      `--healthz-bind-address=127.0.0.1:${proxyHealthz}`,
      `--metrics-bind-address=127.0.0.1:${proxyMetrics}`,
      // Leave the machine's conntrack table size alone (a sysctl the sandbox may refuse).
      '--conntrack-max-per-core=0',
      '--v=1',
    ],
    `http://127.0.0.1:${proxyHealthz}/healthz`,
    join(binDir, 'kube-proxy'),
  );

  const readyNode = await Promise.race([
    dies(registry),
    dies(containerd),
    dies(kubeletProc),
    dies(proxy),
    waitFor(
      `node ${REAL_NODE_NAME} Ready (kubelet log: ${kubeletProc.logPath})`,
      async () => {
        const node = await admin.core.readNode({ name: REAL_NODE_NAME }).catch(() => undefined);
        return node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          ? node
          : undefined;
      },
      { timeoutMs: wait.timeoutMs, intervalMs: 250, signal: wait.signal },
    ),
    // kube-proxy's /healthz answers 200 once it has synced its rules.
  ]);
  await Promise.race([
    dies(proxy),
    waitFor(
      `kube-proxy /healthz (${proxy.logPath})`,
      () => httpOk(`http://127.0.0.1:${proxyHealthz}/healthz`),
      {
        timeoutMs: wait.timeoutMs,
        intervalMs: 250,
        signal: wait.signal,
      },
    ),
  ]);
  return {
    name: REAL_NODE_NAME,
    ip,
    binDir,
    containerdSocket: socket,
    kubeletPort: kubelet,
    checkpointDir: join(dir, 'kubelet', 'checkpoints'),
    ...(criuDir ? { criuDir } : {}),
    registry: { host: registryHost, caFile: pki.caCert, dataDir: registryDir },
    runtimeVersion: readyNode.status?.nodeInfo?.containerRuntimeVersion ?? '',
  };
}
