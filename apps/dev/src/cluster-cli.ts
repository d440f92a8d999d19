// pnpm cluster up | down | status | stop | kill | start | restart — a local control plane for
// development, in the background.
//   eval "$(pnpm cluster up)"      starts one (or reuses the running one) and exports KUBECONFIG
//   pnpm cluster status            lists runs (also test runs in progress), each component's pid
//                                  and health; exits 1 when one of them is not ready
//   pnpm cluster down              stops background clusters and cleans up leftovers of crashed runs
//   pnpm cluster restart COMPONENT stops (kill: SIGKILLs) and starts one component of the background
//                                  cluster (etcd, kube-apiserver, kube-controller-manager,
//                                  kube-scheduler, kwok), waiting until it is healthy again
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  COMPONENTS,
  componentStates,
  crdDir,
  installCrds,
  isAlive,
  isComponentName,
  isOurs,
  makeClients,
  type PidFile,
  readPidFile,
  reapRuns,
  restartComponent,
  runsDir,
  startComponent,
  startLocalCluster,
  stopComponent,
} from '@claimkit/e2e/harness';

const usage = `usage: pnpm cluster up [--nodes N] | down | status | stop|kill|start|restart COMPONENT
  COMPONENT: ${COMPONENTS.join(', ')}`;

function runs(): PidFile[] {
  let names: string[];
  try {
    names = readdirSync(runsDir());
  } catch {
    return [];
  }
  return names
    .map((n) => readPidFile(join(runsDir(), n)))
    .filter((p): p is PidFile => !!p)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

const running = (p: PidFile) => p.procs.length > 0 && p.procs.every(isOurs);

async function readyz(p: PidFile): Promise<string> {
  // Anonymous requests may read /readyz (system:public-info-viewer); the CA is per run, so skip
  // verification for this probe only.
  const { request } = await import('node:https');
  return new Promise((resolve) => {
    const req = request(`${p.server}/readyz`, { rejectUnauthorized: false, timeout: 3_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? 'ready' : `not ready (HTTP ${res.statusCode})`);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve(`unreachable (${e.message})`));
    req.end();
  });
}

async function up(args: string[]): Promise<number> {
  const i = args.indexOf('--nodes');
  const nodes = i >= 0 ? Number(args[i + 1]) : undefined;
  if (nodes !== undefined && !(Number.isInteger(nodes) && nodes >= 1)) {
    console.error(usage);
    return 2;
  }
  const existing = runs().find((p) => p.persistent && running(p));
  if (existing) {
    console.error(`a cluster is already running (${existing.server}); \`pnpm cluster down\` stops it`);
    console.log(`export KUBECONFIG=${existing.kubeconfigPath}`);
    return 0;
  }
  const cluster = await startLocalCluster({ persistent: true, crdDir: false, ...(nodes ? { nodes } : {}) });
  // Unlike a test run, a development cluster is still useful when a CRD does not apply: say so.
  try {
    const crds = await installCrds(makeClients(cluster.kubeconfigPath), crdDir);
    if (crds.length > 0) console.error(`CRDs established: ${crds.join(', ')}`);
  } catch (e) {
    console.error(`WARNING: the CRDs in ${crdDir} were NOT all installed: ${(e as Error).message}`);
  }
  console.error(
    `cluster up in ${((cluster.timings.binariesMs + cluster.timings.startMs) / 1000).toFixed(1)}s: ` +
      `${cluster.server} (Kubernetes ${cluster.kubernetesVersion}, nodes ${cluster.nodes.join(', ')})\n` +
      (cluster.realNode
        ? `  real node:            ${cluster.realNode.name} at ${cluster.realNode.ip} (${cluster.images.length} images: ${cluster.images.map((i) => i.ref).join(', ')})\n`
        : `  real node:            none (${cluster.realNodeMissing ?? 'not asked for'})\n`) +
      `  admin kubeconfig:     ${cluster.kubeconfigPath}\n` +
      `  non-admin kubeconfig: ${cluster.userKubeconfigPath} (user ${cluster.userName}, no RBAC bindings)\n` +
      `  logs:                 ${join(cluster.stateDir, 'logs')}`,
  );
  console.log(`export KUBECONFIG=${cluster.kubeconfigPath}`);
  return 0;
}

async function down(): Promise<number> {
  const dir = runsDir();
  const persistent = runs().filter((p) => p.persistent);
  let n = 0;
  for (const p of persistent) {
    // Only background clusters are stopped on purpose; reapRuns below also removes orphans.
    n += (await reapRuns(dir, { all: true, only: p.stateDir })).length;
  }
  n += (await reapRuns(dir)).length;
  console.error(n === 0 ? 'no cluster to stop' : `stopped and removed ${n} run(s)`);
  return 0;
}

async function status(): Promise<number> {
  const all = runs();
  if (all.length === 0) {
    console.log('no cluster');
    return 0;
  }
  let allUp = true;
  for (const p of all) {
    const kind = p.persistent ? 'background (pnpm cluster up)' : `test run of pid ${p.owner}`;
    const owner = p.persistent || isAlive(p.owner) ? '' : ' [owner gone: leftover]';
    const states = await componentStates(p.stateDir);
    const procs = states
      .map((c) => {
        const health = c.healthy === false ? ' unhealthy' : '';
        return `${c.name}:${c.running ? `${c.pid}${health}` : 'dead'}`;
      })
      .join(' ');
    const health = running(p) ? await readyz(p) : 'stopped';
    allUp &&= health === 'ready';
    console.log(
      `${p.server}  ${health}  ${kind}${owner}\n  since ${p.createdAt}\n  ${procs}\n` +
        `  export KUBECONFIG=${p.kubeconfigPath}\n  non-admin: ${p.userKubeconfigPath}`,
    );
  }
  return allUp ? 0 : 1; // 1: some listed cluster is not healthy
}

/** stop, kill, start or restart one component of the background cluster (else of the newest run). */
async function component(cmd: 'stop' | 'kill' | 'start' | 'restart', args: string[]): Promise<number> {
  const name = args[0];
  if (!name || !isComponentName(name) || args.length > 1) {
    console.error(usage);
    return 2;
  }
  const all = runs();
  const run = all.filter((p) => p.persistent).at(-1) ?? all.at(-1);
  if (!run) {
    console.error('no cluster: `pnpm cluster up` starts one');
    return 1;
  }
  const t0 = Date.now();
  if (cmd === 'stop' || cmd === 'kill') await stopComponent(run.stateDir, name, { kill: cmd === 'kill' });
  else if (cmd === 'start') await startComponent(run.stateDir, name);
  else await restartComponent(run.stateDir, name);
  const state = (await componentStates(run.stateDir)).find((c) => c.name === name);
  const now = state?.running ? `running (pid ${state.pid})` : 'stopped';
  console.error(`${name} of ${run.server}: ${now} after ${cmd} in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  return 0;
}

async function main(cmd: string | undefined, rest: string[]): Promise<number> {
  switch (cmd) {
    case 'stop':
    case 'kill':
    case 'start':
    case 'restart':
      return component(cmd, rest);
    case 'up':
      return up(rest);
    case 'down':
      return down();
    case 'status':
      return status();
    default:
      console.error(usage);
      return 2;
  }
}

const [cmd, ...rest] = process.argv.slice(2);
try {
  process.exit(await main(cmd, rest));
} catch (e) {
  console.error(`cluster ${cmd}: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
