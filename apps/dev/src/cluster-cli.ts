// `pnpm cluster`: a local control plane for development, in the background. Its commands, their
// flags and its help are cluster-args.ts's (`pnpm cluster --help`).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { configOrExit } from '@claimkit/core/options';
import {
  type ComponentName,
  componentStates,
  crdDir,
  installCrds,
  isAlive,
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
import { type ClusterCommand, clusterStartup } from './cluster-args.ts';

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

async function up(nodes: number | undefined): Promise<number> {
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
async function component(cmd: 'stop' | 'kill' | 'start' | 'restart', name: ComponentName): Promise<number> {
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

function main(c: ClusterCommand): Promise<number> {
  switch (c.cmd) {
    case 'up':
      return up(c.nodes);
    case 'down':
      return down();
    case 'status':
      return status();
    default:
      return component(c.cmd, c.component);
  }
}

const command = configOrExit(clusterStartup(process.argv.slice(2)), process);
try {
  process.exit(await main(command));
} catch (e) {
  console.error(`cluster ${command.cmd}: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
