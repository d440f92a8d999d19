// The local provider: a real control plane from binaries built out of Go modules (see
// apps/e2e/controlplane): etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
// with fake nodes. No Docker, no root, loopback only; one directory per run holds certificates,
// kubeconfigs, logs, etcd data and the pid file that lets anyone clean up after a crash
// (local-run.ts). The steps are in local-components.ts, the readiness checks in local-readiness.ts.
import { existsSync, mkdirSync } from 'node:fs';
import { controlPlaneVersions, ensureBinaries, ensureCriu, ensureNodeBinaries } from './binaries.ts';
import { type BuiltImage, buildImages, type ImagesResult } from './images.ts';
import { installCrds, makeClients } from './kube.ts';
import {
  createFakeNodes,
  createRunPki,
  startApiserver,
  startControllerManager,
  startEtcd,
  startKwok,
  startScheduler,
} from './local-components.ts';
import { nodeIP, REAL_NODE_NAME, type RealNode, realNodeSupport, startRealNode } from './local-node.ts';
import { acquireNodeLock } from './local-node-cleanup.ts';
import { guardedBy, untilReady, type Wait } from './local-readiness.ts';
import { createRun } from './local-run.ts';
import { crdDir as defaultCrdDir, runsDir } from './paths.ts';
import { E2E_USER } from './pki.ts';
import { reapRuns } from './procs.ts';
import type { ClusterHandle } from './types.ts';

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
  /**
   * A real node (containerd, kubelet, kube-proxy; local-node.ts) besides the kwok nodes. Default:
   * on where the machine allows it (root, cgroups; realNodeSupport) unless CLAIMKIT_E2E_REAL_NODE=0.
   * `true` fails the start where it cannot run.
   */
  realNode?: boolean;
  /**
   * The images the real node imports (the sandbox image among them). Default: every image of
   * apps/e2e/images/build-images.sh (built, or found in the cache, while the binaries build).
   */
  nodeImages?: () => Promise<ImagesResult>;
}

export interface LocalCluster extends ClusterHandle {
  provider: 'local';
  stateDir: string;
  binDir: string;
  /** etcd's client URL (its /metrics: compactions, commits), on loopback. */
  etcdUrl: string;
  kubernetesVersion: string;
  /** Names of the fake nodes. */
  nodes: string[];
  /** The real node, when the run has one. */
  realNode?: RealNode;
  /** Why the run has no real node (one line), when it was wanted by default but cannot run here. */
  realNodeMissing?: string;
  /** The images the real node has (imported from their OCI archives). */
  images: BuiltImage[];
  /** Why the real node has none of our images (one line), when this machine cannot build them. */
  imagesMissing?: string;
  /** The image build failed (its failed step and log tail): a defect, not a missing capability. */
  imagesFailed?: string;
  /** Wall-clock milliseconds: binaries (build or cache hit) and control plane start. */
  timings: { binariesMs: number; startMs: number };
}

export async function startLocalCluster(opts: LocalClusterOptions = {}): Promise<LocalCluster> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`[e2e:local] ${m}\n`));
  const base = runsDir();
  mkdirSync(base, { recursive: true });
  for (const dir of await reapRuns(base)) log(`cleaned up a leftover run: ${dir}`);

  const t0 = Date.now();
  const realNodeMissing = realNodeWanted(opts);
  // Built while the binaries build; a failed build leaves the node without images (not the run).
  const images =
    realNodeMissing === undefined
      ? (opts.nodeImages ?? (() => buildImages()))().catch((e: unknown) => new Error(errorText(e)))
      : undefined;
  // CRIU (checkpoints) is prepared beside the node's binaries; without it the node runs, but every
  // checkpoint fails with CRIU's absence and the run says why.
  const [binDir, nodeBinDir, criu] = await Promise.all([
    ensureBinaries(),
    realNodeMissing === undefined ? ensureNodeBinaries() : undefined,
    realNodeMissing === undefined ? ensureCriu().catch((e: unknown) => new Error(errorText(e))) : undefined,
  ]);
  if (criu instanceof Error) log(`the real node has no CRIU, so checkpoints fail: ${criu.message}`);
  const criuDir = typeof criu === 'string' ? criu : undefined;
  const binariesMs = Date.now() - t0;
  if (realNodeMissing && opts.realNode !== false) log(`no real node: ${realNodeMissing}`);

  let lastError: unknown;
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      const cluster = await startOnce(binDir, nodeBinDir, criuDir, images, base, opts, log);
      cluster.timings.binariesMs = binariesMs;
      if (realNodeMissing && opts.realNode !== false) cluster.realNodeMissing = realNodeMissing;
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

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Undefined when the run gets a real node; otherwise why not (also "not asked for"). */
function realNodeWanted(opts: LocalClusterOptions): string | undefined {
  const wanted = opts.realNode ?? process.env.CLAIMKIT_E2E_REAL_NODE !== '0';
  if (!wanted) return 'not asked for (CLAIMKIT_E2E_REAL_NODE=0)';
  const missing = realNodeSupport();
  if (missing && opts.realNode === true) throw new Error(missing);
  return missing;
}

async function startOnce(
  binDir: string,
  nodeBinDir: string | undefined,
  criuDir: string | undefined,
  imagesBuilt: Promise<ImagesResult | Error> | undefined,
  base: string,
  opts: LocalClusterOptions,
  log: (msg: string) => void,
): Promise<LocalCluster> {
  const t0 = Date.now();
  const persistent = opts.persistent ?? false;
  const keepState = opts.keepState ?? process.env.CLAIMKIT_E2E_KEEP_STATE === '1';
  const nodeCount = opts.nodes ?? 2;
  const run = await createRun(binDir, base, { persistent, keepState });
  const nodeTaken = nodeBinDir ? acquireNodeLock(run.stateDir) : undefined;
  if (nodeTaken) {
    if (opts.realNode === true) {
      await run.stop();
      throw new Error(nodeTaken);
    }
    log(`no real node: ${nodeTaken}`);
    nodeBinDir = undefined;
  }
  let controlPlaneUp = false;
  // Stops the polling loops of a failed start (they would otherwise run on until their deadline).
  const abort = new AbortController();
  const wait: Wait = { timeoutMs: opts.timeoutMs ?? 120_000, signal: abort.signal };
  try {
    const ip = nodeBinDir ? nodeIP() : undefined;
    const pki = await createRunPki(run, ip ? { name: REAL_NODE_NAME, ip } : undefined);
    await startEtcd(run, wait);
    log(`etcd ready on 127.0.0.1:${run.ports.etcd}`);
    await startApiserver(run, pki, wait, ip);
    log(`kube-apiserver ready at ${run.server}`);

    // controller-manager, scheduler and kwok start together; any of them exiting fails the start.
    const guard = guardedBy([
      startControllerManager(run, pki),
      startScheduler(run, pki),
      startKwok(run, pki),
    ]);
    const admin = makeClients(run.kubeconfigPath);
    const nodes = await createFakeNodes(admin, nodeCount);
    await guard(untilReady(admin, run.ports, nodeCount, wait));
    log(`controller-manager, scheduler and kwok ready; nodes: ${nodes.join(', ')}`);
    let realNode: RealNode | undefined;
    let images: BuiltImage[] = [];
    let imagesMissing: string | undefined;
    let imagesFailed: string | undefined;
    if (nodeBinDir) {
      const built = (await imagesBuilt) ?? { ok: false, reason: 'no images asked for' };
      if (built instanceof Error) {
        imagesFailed = built.message;
        log(`the real node gets none of our images: their build FAILED: ${built.message}`);
      } else if (built.ok) images = built.images;
      else {
        imagesMissing = built.reason;
        log(`the real node gets none of our images: ${built.reason}`);
      }
      const t1 = Date.now();
      // What pods run: not node-base (only the components' base) nor the CLI (a user's tool).
      const archives = images.filter((i) => !['node-base', 'cli'].includes(i.name)).map((i) => i.archive);
      realNode = await guard(
        startRealNode(run, pki, { binDir: nodeBinDir, criuDir }, archives, wait, admin, log),
      );
      log(
        `real node ${realNode.name} Ready at ${realNode.ip} in ${Date.now() - t1} ms (${archives.length} images imported)`,
      );
    }
    controlPlaneUp = true;

    const crdDir = opts.crdDir ?? defaultCrdDir;
    if (crdDir !== false && existsSync(crdDir)) {
      const crds = await guard(installCrds(admin, crdDir, wait.timeoutMs));
      if (crds.length > 0) log(`CRDs established: ${crds.join(', ')}`);
    }

    const kubernetesVersion = controlPlaneVersions().kubernetes;
    if (persistent) run.detach();
    return {
      provider: 'local',
      kubeconfigPath: run.kubeconfigPath,
      userKubeconfigPath: run.userKubeconfigPath,
      userName: E2E_USER,
      server: run.server,
      stateDir: run.stateDir,
      binDir,
      etcdUrl: `http://127.0.0.1:${run.ports.etcd}`,
      kubernetesVersion,
      nodes,
      ...(realNode ? { realNode } : {}),
      images,
      ...(imagesMissing ? { imagesMissing } : {}),
      ...(imagesFailed ? { imagesFailed } : {}),
      ...(nodeTaken ? { realNodeMissing: nodeTaken } : {}),
      timings: { binariesMs: 0, startMs: Date.now() - t0 },
      stop: run.stop,
    };
  } catch (e) {
    abort.abort();
    const logs = run.logTails(15);
    await run.stop();
    // Component logs explain a control plane that did not come up, not a bad manifest.
    if (e instanceof Error && !controlPlaneUp && !e.message.includes('last log lines')) {
      e.message += `\n${logs.join('\n')}`;
    }
    throw e;
  }
}
