// Shared by the suites that run on the real node (local-node.ts): pools whose pods run our workload
// image for real, the node's containerd (ctr) for what only the runtime can do (kill a container),
// and waits that name what they waited for.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Pod, PodPool } from '@claimkit/core';
import { getOrUndefined, kube, until } from '../controller/helpers.ts';
import { isNotFound, testPool } from '../harness/index.ts';
import {
  REAL_NODE_NAME,
  realNodePlacement,
  runPoolOnRealNode,
  WORKLOAD_IMAGE,
} from '../harness/local-node.ts';
import type { E2EClusterInfo } from '../harness/vitest.ts';

const exec = promisify(execFile);

/** A pool whose pods run `command` (default: sleep forever) in the workload image on the real node. */
export function realPool(
  ns: string,
  name: string,
  o: {
    minIdle: number;
    maxPods: number;
    command?: string[];
    restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  },
): PodPool {
  const pool = testPool(ns, name, { minIdle: o.minIdle, maxPods: o.maxPods });
  runPoolOnRealNode(pool, {
    command: o.command ?? ['sleep', '1000000'],
    ...(o.restartPolicy ? { restartPolicy: o.restartPolicy } : {}),
  });
  return pool;
}

/** The container that runs on the node: running, with its runtime id. */
export function runningContainer(pod: Pod, name = 'main'): { id: string; restartCount: number } | undefined {
  const s = (
    pod.status as
      | {
          containerStatuses?: {
            name: string;
            containerID?: string;
            restartCount?: number;
            state?: { running?: unknown };
          }[];
        }
      | undefined
  )?.containerStatuses?.find((c) => c.name === name);
  if (!s?.state?.running || !s.containerID) return undefined;
  return { id: s.containerID.replace(/^containerd:\/\//, ''), restartCount: s.restartCount ?? 0 };
}

/** SIGKILLs a container through the node's containerd (what an OOM kill or a crash looks like). */
export async function killContainer(
  node: NonNullable<E2EClusterInfo['realNode']>,
  containerId: string,
): Promise<void> {
  await exec(join(node.binDir, 'ctr'), [
    '-a',
    node.containerdSocket,
    '-n',
    'k8s.io',
    'tasks',
    'kill',
    '-s',
    'SIGKILL',
    containerId,
  ]);
}

/** The value, or undefined when the API answered 404 (client-node's ApiException). */
export async function unlessNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** Creates, or leaves what is already there (409 AlreadyExists). */
export async function unlessAlreadyExists<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if ((e as { code?: number }).code === 409) return undefined;
    throw e;
  }
}

/**
 * The fault switches of the real node's `criu` wrapper (apps/e2e/controlplane/build-criu.sh): one
 * directory per machine, like the real node itself.
 */
export const criuFaults = {
  dir: process.env.CLAIMKIT_CRIU_FAULTS ?? '/run/claimkit-criu',
  /** Every CRIU call sleeps `seconds` first (a checkpoint in flight) and says so in `delayed`. */
  delay(seconds: number): void {
    mkdirSync(this.dir, { recursive: true });
    rmSync(join(this.dir, 'delayed'), { force: true });
    writeFileSync(join(this.dir, 'delay-seconds'), String(seconds));
  },
  /** Every CRIU call fails, saying `why`. */
  fail(why: string): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(join(this.dir, 'fail'), why);
  },
  /** How many CRIU calls have begun their delay since delay(). */
  delayedCalls(): number {
    const f = join(this.dir, 'delayed');
    return existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean).length : 0;
  },
  clear(): void {
    for (const f of ['delay-seconds', 'fail', 'delayed']) rmSync(join(this.dir, f), { force: true });
  },
};

/** The kubelet's checkpoint archives of one pod's container, oldest first. */
export function checkpointArchives(dir: string, ns: string, pod: string, container = 'main'): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.startsWith(`checkpoint-${pod}_${ns}-${container}-`) && f.endsWith('.tar'))
    .sort()
    .map((f) => join(dir, f));
}

/** Counts in memory only (no file): a restore that continues the count restored the process. */
export const MEMORY_COUNTER = 'n=0; while :; do n=$((n+1)); echo $n; sleep 1; done';

/**
 * A pod on the real node running `script` (default MEMORY_COUNTER) in container `main` of the
 * workload image, labelled app=`app`; resolves once it is Ready with its container running.
 */
export async function counterPod(
  ns: string,
  name: string,
  app: string,
  o: { script?: string; graceSeconds?: number } = {},
): Promise<Pod> {
  await kube().create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { app } },
    spec: {
      ...realNodePlacement(),
      terminationGracePeriodSeconds: o.graceSeconds ?? 2,
      containers: [
        {
          name: 'main',
          image: WORKLOAD_IMAGE,
          imagePullPolicy: 'Never',
          command: ['sh', '-c', o.script ?? MEMORY_COUNTER],
        },
      ],
    },
  } as Pod);
  return until(
    `pod ${ns}/${name} Ready with its container running on ${REAL_NODE_NAME}`,
    async () => {
      const p = (await getOrUndefined(kube().get('Pod', { namespace: ns, name }))) as Pod | undefined;
      const ready = p?.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True');
      return p && ready && runningContainer(p) ? p : undefined;
    },
    90_000,
  );
}

/** The last number a counter wrote to stdout in a CRI container log (`<time> stdout F <n>`). */
export function lastLoggedNumber(criLog: string): number | undefined {
  const nums = criLog
    .split('\n')
    .map((l) => /\sstdout [FP] (\d+)$/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined);
  return nums.length > 0 ? Number(nums.at(-1)) : undefined;
}
