// Shared by the controller e2e suites: the controller in-process (Manager on @claimkit/kube against
// the harness's kubeconfig), a client for the test's own writes, polling with deadlines, and the
// invariant check every test ends with.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  controllerDefaults,
  createKubeController,
  jsonLogger,
  type KubeController,
  kubeClient,
} from '@claimkit/controller';
import {
  type Capture,
  getOrUndefined,
  type KubeEvent,
  type Pod,
  type PodClaim,
  type PodPool,
  type Shard,
} from '@claimkit/core';
import { checkConvergence, checkPoolExcessIdle, checkSafety, type Violation } from '@claimkit/core/testing';
import { waitFor } from '../harness/index.ts';
import { e2eCluster } from '../harness/vitest.ts';

export type Kube = ReturnType<typeof kubeClient>;

let shared: Kube | undefined;
export function kube(): Kube {
  shared ??= kubeClient(e2eCluster().kubeconfigPath);
  return shared;
}

export interface RunningController extends KubeController {
  stop(): Promise<void>;
}

/** Runs a controller in this process, watching one namespace. */
export async function startController(
  namespace: string,
  opts: {
    sweepIntervalMs?: number;
    identity?: string /** Default: the admin's. */;
    kubeconfig?: string;
    /** Watch Nodes (default true; false is `--no-watch-nodes`). */
    watchNodes?: boolean;
    /** `--capture-agent-token-file`: sent to Http capture agents as a bearer token. */
    captureAgentTokenFile?: string;
    /** `--shard INDEX/COUNT`. */
    shard?: Shard;
    /** `--leader-elect`, the Lease in this namespace. */
    leaseNamespace?: string;
  } = {},
): Promise<RunningController> {
  // The shipped binary's defaults (its options table); the suites shorten only the sweep (recovery
  // tests wait for it) and the shutdown grace.
  const ctl = createKubeController({
    config: {
      ...controllerDefaults(),
      kubeconfig: opts.kubeconfig ?? e2eCluster().kubeconfigPath,
      namespace,
      sweepInterval: opts.sweepIntervalMs ?? 2000,
      identity: opts.identity ?? `e2e-${process.pid}`,
      shutdownGrace: 5000,
      ...(opts.watchNodes === false ? { watchNodes: false } : {}),
      ...(opts.captureAgentTokenFile ? { captureAgentTokenFile: opts.captureAgentTokenFile } : {}),
      ...(opts.shard ? { shard: opts.shard } : {}),
      ...(opts.leaseNamespace ? { leaderElect: true, leaseNamespace: opts.leaseNamespace } : {}),
    },
    ...(process.env.CLAIMKIT_E2E_CONTROLLER_LOG
      ? { log: jsonLogger(process.env.CLAIMKIT_E2E_CONTROLLER_LOG as 'debug') }
      : {}),
  });
  await ctl.manager.start();
  return { ...ctl, stop: () => ctl.manager.stop() };
}

/**
 * Who bound each claim of `ns`: claim name -> its Bound Event's reportingInstance (the recording
 * controller's identity, which names its pod when it runs in one).
 */
export async function boundEventReporters(ns: string): Promise<Map<string, string>> {
  // reportingInstance is the recorder's instance; core's Event type leaves it out.
  const events = (await kube().list('Event', { namespace: ns })).items as (KubeEvent & {
    reportingInstance?: string;
  })[];
  const out = new Map<string, string>();
  for (const e of events)
    if (e.reason === 'Bound' && e.involvedObject.kind === 'PodClaim')
      out.set(e.involvedObject.name, e.reportingInstance ?? '');
  return out;
}

export function until<T>(
  what: string,
  f: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
  explain?: () => Promise<string> | string,
) {
  return waitFor(what, f, { timeoutMs, intervalMs: 50, ...(explain ? { explain } : {}) });
}

/**
 * Waits until pod ns/name is Ready (kwok's pod-ready stage on a fake node, the kubelet on the real
 * one). At the deadline it says what the pod is instead: see describePod.
 */
export function untilPodReady(ns: string, name: string, timeoutMs = 30_000): Promise<Pod> {
  return until(
    `pod ${name} Ready`,
    async () => {
      const p = await getOrUndefined(kube().get('Pod', { namespace: ns, name }));
      return p && isReady(p) ? p : undefined;
    },
    timeoutMs,
    () => describePod(ns, name),
  );
}

/**
 * One paragraph on why a pod is not Ready: its UID, node, phase, IP and conditions, the Events about
 * it (the scheduler's FailedScheduling among them) and, on the local control plane, what kwok and
 * the scheduler logged about it.
 */
export async function describePod(ns: string, name: string): Promise<string> {
  const p = await getOrUndefined(kube().get('Pod', { namespace: ns, name }));
  const parts: string[] = [];
  if (!p) parts.push(`pod ${ns}/${name} does not exist`);
  else {
    const conditions = (p.status?.conditions ?? [])
      .map((c) => `${c.type}=${c.status}${c.reason ? `(${c.reason})` : ''}`)
      .join(' ');
    parts.push(
      `pod ${ns}/${name} uid ${p.metadata.uid} node ${p.spec.nodeName ?? '(none)'} phase ${p.status?.phase ?? '(none)'} ` +
        `podIP ${p.status?.podIP ?? '(none)'} conditions [${conditions}]` +
        (p.metadata.deletionTimestamp ? ` deleting since ${p.metadata.deletionTimestamp}` : ''),
    );
  }
  const events = (
    (await kube().list('Event', { namespace: ns })).items as unknown as {
      involvedObject?: { kind?: string; name?: string; uid?: string };
      reason?: string;
      message?: string;
      count?: number;
    }[]
  ).filter((e) => e.involvedObject?.kind === 'Pod' && e.involvedObject.name === name);
  for (const e of events.slice(-6))
    parts.push(`event ${e.reason} x${e.count ?? 1} (uid ${e.involvedObject?.uid}): ${e.message ?? ''}`);
  const stateDir = e2eCluster().stateDir;
  if (stateDir)
    for (const component of ['kwok', 'kube-scheduler'])
      for (const line of logLinesAbout(join(stateDir, 'logs', `${component}.log`), `${ns}/${name}`, 8))
        parts.push(`${component}: ${line}`);
  return parts.join('\n    ');
}

/** The last `max` lines of a log file that mention `needle` (none when the file cannot be read). */
function logLinesAbout(path: string, needle: string, max: number): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.includes(needle))
    .slice(-max)
    .map((l) => (l.length > 400 ? `${l.slice(0, 400)}…` : l));
}

export async function clusterState(ns: string) {
  const c = kube();
  const [captures, pods, claims, pools] = await Promise.all([
    c.list('Capture', { namespace: ns }),
    c.list('Pod', { namespace: ns }),
    c.list('PodClaim', { namespace: ns }),
    c.list('PodPool', { namespace: ns }),
  ]);
  return {
    captures: captures.items as Capture[],
    pods: pods.items as Pod[],
    claims: claims.items as PodClaim[],
    pools: pools.items as PodPool[],
  };
}

const fmt = (vs: Violation[]) =>
  vs.map((v) => `${v.invariant}: ${v.message} [${v.objects.join(', ')}]`).join('\n');

/** Safety now, and convergence within timeoutMs (the controller may still be finishing). */
export async function expectAllInvariants(ns: string, timeoutMs = 30_000): Promise<void> {
  const safety = checkSafety(await clusterState(ns));
  if (safety.length > 0) throw new Error(`safety invariants violated in ${ns}:\n${fmt(safety)}`);
  let last: Violation[] = [];
  try {
    await until(
      `every invariant in ${ns}`,
      async () => {
        const state = await clusterState(ns);
        // P8 in the form that holds for any number of controller replicas (chaos runs overlap two):
        // no Idle pod is left while a pool is above maxPods.
        last = [...checkConvergence(state, Date.now()), ...checkPoolExcessIdle(state.pools, state.pods)];
        return last.length === 0;
      },
      timeoutMs,
    );
  } catch {
    throw new Error(`invariants violated in ${ns}:\n${fmt(last)}`);
  }
}

export function podSpec(name: string, ns: string, labels: Record<string, string>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels },
    spec: {
      containers: [{ name: 'main', image: 'registry.example/claimkit/app:1' }],
      terminationGracePeriodSeconds: 0,
    } as Pod['spec'],
  };
}

export const isReady = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export { getOrUndefined };

/**
 * Before the controller stops: delete the namespace's PodClaims and wait until their finalizers
 * completed, so the namespace can be deleted afterwards.
 */
export async function finalizeClaims(ns: string, timeoutMs = 30_000): Promise<void> {
  const c = kube();
  for (const cl of (await c.list('PodClaimSet', { namespace: ns })).items)
    await getOrUndefined(c.delete('PodClaimSet', { namespace: ns, name: cl.metadata.name }));
  for (const cl of (await c.list('PodClaim', { namespace: ns })).items)
    await getOrUndefined(c.delete('PodClaim', { namespace: ns, name: cl.metadata.name }));
  await until(
    `PodClaims in ${ns} finalized`,
    async () => (await c.list('PodClaim', { namespace: ns })).items.length === 0,
    timeoutMs,
  );
}
