// A pool seeded from an `image:` result (a checkpoint OCI image) on the in-memory API model: a pod
// whose runtime cannot restore it (the image cannot be pulled, containerd 2.4 "no command
// specified", CRIU refusing at start) is never handed out and is reported (condition
// SourceRestored=False naming pod, node and the runtime's words; one Warning Event per pod), and
// spec.source.onRestoreFailure decides the rest: Wait keeps it, Cold replaces it with a cold pod
// (the template's own image, the source annotations and env kept) while a cold pod is left.
import { describe, expect, test } from 'vitest';
import { findCondition } from '../api/conditions.ts';
import { ANNOTATION_SOURCE_REF, ENV_SOURCE_REF, LABEL_POOL, LABEL_STATE } from '../api/constants.ts';
import type { Pod, PodClaim } from '../api/types.ts';
import { isQuietIdle } from '../pool/pool-pod-index.ts';
import { CONDITION_SOURCE_RESTORED, isFailingToStart, restoreFailure } from '../pool/restore.ts';
import {
  capture,
  captured,
  forPool,
  onRestoreFailure,
  podClaim,
  podPool,
  podTemplate,
  withMinIdle,
  withSelector,
  withSource,
  withTemplate,
} from '../testing/fixtures.ts';
import { putAll } from '../testing/model-helpers.ts';
import { world as harness, type World } from '../testing/world.ts';
import { reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodPool } from './podpool/index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });
const IMAGE = '10.0.0.9:5000/claimkit/default-snap@sha256:' + 'a'.repeat(64);
const REF = `image:${IMAGE}`;
const TEMPLATE_IMAGE = 'app:1';

const world = () => harness({ withoutRules: ['Capture'] });
const poolPods = (w: World): Pod[] =>
  w.model
    .listNow('Pod', { namespace: NS })
    .filter((p) => p.metadata.labels?.[LABEL_POOL] === 'warm' && !p.metadata.deletionTimestamp);
const restored = (w: World) =>
  findCondition(w.model.getNow('PodPool', key('warm')).status?.conditions, CONDITION_SOURCE_RESTORED);

async function seededPool(w: World, ...mods: Parameters<typeof podPool>[1][]) {
  await putAll(
    w.model,
    podPool(
      'warm',
      withSource('snap'),
      withMinIdle(2),
      withTemplate(podTemplate({ app: 'warm' }, { containers: [{ name: 'main', image: TEMPLATE_IMAGE }] })),
      ...mods,
    ),
    capture('snap', withSelector({ app: 'w' }), captured(REF, { token: 3 })),
  );
  await reconcilePodPool(w.deps, key('warm'));
}

/** The kubelet's word on a pod: scheduled on n1, its container waiting for `reason`. */
function kubeletSays(
  w: World,
  pod: Pod,
  state: Record<string, unknown>,
  lastState?: Record<string, unknown>,
): void {
  w.model.setPodStatusNow(key(pod.metadata.name), {
    phase: 'Pending',
    conditions: [{ type: 'Ready', status: 'False' }],
    containerStatuses: [
      {
        name: 'main',
        ready: false,
        restartCount: 0,
        image: IMAGE,
        imageID: '',
        state,
        ...(lastState ? { lastState } : {}),
      },
    ],
  } as Pod['status']);
}

function scheduled(w: World, pods: Pod[]): Pod[] {
  return pods.map((p) => {
    const cur = w.model.getNow('Pod', key(p.metadata.name));
    return { ...cur, spec: { ...cur.spec, nodeName: 'n1' } };
  });
}

const PULL_FAILED = {
  waiting: {
    reason: 'ErrImagePull',
    message: `failed to pull and unpack image "${IMAGE}": not found`,
  },
};

describe('restore failures are judged from the pod status alone', () => {
  test('pull, create and start failures of the source container; nothing while it is being created or runs', () => {
    const source = { captureName: 'snap' };
    const seed = { captureName: 'snap', token: 3, ref: REF };
    const base: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: NS },
      spec: { nodeName: 'n1', containers: [{ name: 'main', image: IMAGE }] },
    };
    const withState = (state: object, lastState?: object): Pod =>
      ({
        ...base,
        status: { containerStatuses: [{ name: 'main', state, ...(lastState ? { lastState } : {}) }] },
      }) as Pod;
    expect(restoreFailure(withState(PULL_FAILED), source, seed)).toEqual({
      pod: 'p',
      node: 'n1',
      reason: 'ErrImagePull',
      message: PULL_FAILED.waiting.message,
    });
    expect(
      restoreFailure(
        withState({
          waiting: {
            reason: 'CreateContainerError',
            message: 'failed to generate spec: no command specified',
          },
        }),
        source,
        seed,
      )?.message,
    ).toContain('no command specified');
    // CRIU refusing the restore fails the start; the kubelet backs off with it as the last state.
    const startError = withState(
      { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } },
      { terminated: { reason: 'StartError', message: 'criu failed: type RESTORE errno 0', exitCode: 128 } },
    );
    expect(restoreFailure(startError, source, seed)).toMatchObject({
      reason: 'StartError',
      message: /criu failed/,
    });
    expect(isFailingToStart(startError)).toBe(true);
    for (const fine of [
      withState({ waiting: { reason: 'ContainerCreating' } }),
      withState({ running: { startedAt: '2026-01-01T00:00:00Z' } }),
      withState({ waiting: { reason: 'CreateContainerConfigError', message: 'secret "x" not found' } }),
    ])
      expect(restoreFailure(fine, source, seed)).toBeUndefined();
    // A cold pod (the template's image) is not restoring, whatever its status says.
    const cold = {
      ...withState(PULL_FAILED),
      spec: { nodeName: 'n1', containers: [{ name: 'main', image: 'app:1' }] },
    };
    expect(restoreFailure(cold as Pod, source, seed)).toBeUndefined();
    expect(isFailingToStart(withState(PULL_FAILED))).toBe(true);
  });
});

describe('a pool whose pods cannot be restored from the checkpoint image', () => {
  test('Wait (the default): reported once per pod, never handed out, left to retry', async () => {
    const w = world();
    await seededPool(w);
    const pods = scheduled(w, poolPods(w));
    expect(pods).toHaveLength(2);
    for (const p of pods) {
      expect(p.spec.containers[0]).toMatchObject({ image: IMAGE, imagePullPolicy: 'IfNotPresent' });
      await w.model.update({ ...p });
    }
    for (const p of poolPods(w)) kubeletSays(w, p, PULL_FAILED);
    // Such pods are never "quiet": the pool judges them by name.
    expect(poolPods(w).some(isQuietIdle)).toBe(false);
    await putAll(w.model, podClaim('c1', forPool('warm')));
    for (let i = 0; i < 3; i++) {
      await reconcilePodPool(w.deps, key('warm'));
      await reconcilePodClaim(w.deps, key('c1'));
    }
    const cond = restored(w);
    expect(cond).toMatchObject({ status: 'False', reason: 'RestoreFailed' });
    for (const p of pods) expect(cond?.message).toContain(`pod ${p.metadata.name} on node n1: ErrImagePull`);
    expect(cond?.message).toContain('onRestoreFailure: Wait');
    const failed = w.events.filter((e) => e.reason === 'RestoreFailed');
    expect(failed).toHaveLength(2);
    for (const e of failed) {
      expect(e.type).toBe('Warning');
      expect(e.message).toMatch(/^pod warm-\w+ on node n1: ErrImagePull: failed to pull and unpack image/);
    }
    // Kept as they are (the kubelet retries the pull), and no claim binds them (the waiting claim's
    // own extra pod is the only other one: pool/demand.ts).
    const names = poolPods(w).map((p) => p.metadata.name);
    for (const p of pods) expect(names).toContain(p.metadata.name);
    expect(names).toHaveLength(3);
    expect(w.model.getNow('PodClaim', key('c1')).status?.podName ?? '').toBe('');
    expect(poolPods(w).every((p) => p.metadata.labels?.[LABEL_STATE] === 'Idle')).toBe(true);

    // The registry is back: the pods run, the pool says they are restored, the claim binds.
    w.warm(poolPods(w));
    await reconcilePodPool(w.deps, key('warm'));
    for (let i = 0; i < 3; i++) await reconcilePodClaim(w.deps, key('c1'));
    expect(restored(w)).toMatchObject({ status: 'True', reason: 'Restored' });
    expect((w.model.getNow('PodClaim', key('c1')) as PodClaim).status?.podName).toBeTruthy();
    expect(w.events.filter((e) => e.reason === 'RestoreFailed')).toHaveLength(2);
  });

  test('Cold: the failed pods are replaced by cold pods, which keep the source annotations and env', async () => {
    const w = world();
    await seededPool(w, onRestoreFailure('Cold'));
    const first = scheduled(w, poolPods(w));
    for (const p of first) await w.model.update({ ...p });
    kubeletSays(w, poolPods(w)[0]!, {
      waiting: { reason: 'CreateContainerError', message: 'failed to generate spec: no command specified' },
    });
    await reconcilePodPool(w.deps, key('warm'));
    w.model.completePodDeletions();
    expect(restored(w)).toMatchObject({ status: 'False', reason: 'RestoreFailed' });
    expect(restored(w)?.message).toContain('no command specified');
    expect(restored(w)?.message).toContain('onRestoreFailure: Cold');
    const names = poolPods(w).map((p) => p.metadata.name);
    expect(names).not.toContain(first[0]!.metadata.name);
    expect(names).toContain(first[1]!.metadata.name);
    const cold = poolPods(w).filter((p) => p.spec.containers[0]!.image === TEMPLATE_IMAGE);
    expect(cold).toHaveLength(1);
    expect(cold[0]!.metadata.annotations?.[ANNOTATION_SOURCE_REF]).toBe(REF);
    expect(
      (cold[0]!.spec.containers[0]!.env as { name: string; value: string }[]).find(
        (e) => e.name === ENV_SOURCE_REF,
      )?.value,
    ).toBe(REF);

    // The result is remembered as one that starts cold (status.coldStartRef): every new pod of it
    // starts cold, even once no cold pod is left.
    w.warm(poolPods(w));
    await reconcilePodPool(w.deps, key('warm'));
    expect(restored(w)).toMatchObject({ status: 'False', reason: 'StartingCold' });
    expect(w.model.getNow('PodPool', key('warm')).status?.coldStartRef).toBe(REF);
    for (const p of poolPods(w)) await w.model.delete('Pod', key(p.metadata.name));
    w.model.completePodDeletions();
    await reconcilePodPool(w.deps, key('warm'));
    expect(poolPods(w).map((p) => p.spec.containers[0]!.image)).toEqual([TEMPLATE_IMAGE, TEMPLATE_IMAGE]);

    // A new fenced result restores again (and the memory goes with the old result).
    const cap = w.model.getNow('Capture', key('snap'));
    const next = `image:${IMAGE.replace('a'.repeat(64), 'b'.repeat(64))}`;
    await w.model.updateStatus({
      ...cap,
      status: { ...cap.status!, epoch: 4, result: { ...cap.status!.result!, ref: next, token: 4 } },
    });
    for (let i = 0; i < 6; i++) {
      await reconcilePodPool(w.deps, key('warm'));
      w.model.completePodDeletions();
    }
    const images = poolPods(w).map((p) => p.spec.containers[0]!.image);
    expect(images.filter((i) => i === next.slice('image:'.length)).length).toBeGreaterThanOrEqual(2);
    expect(w.model.getNow('PodPool', key('warm')).status?.coldStartRef).toBeUndefined();
    expect(restored(w)).toMatchObject({ status: 'True', reason: 'Restored' });
    expect(w.events.filter((e) => e.reason === 'RestoreFailed')).toHaveLength(1);
  });

  test('a seed that is not an image: ref has no SourceRestored condition', async () => {
    const w = world();
    await putAll(
      w.model,
      podPool('warm', withSource('snap'), withMinIdle(1)),
      capture('snap', withSelector({ app: 'w' }), captured('checkpoint://n1/a.tar', { token: 1 })),
    );
    await reconcilePodPool(w.deps, key('warm'));
    await reconcilePodPool(w.deps, key('warm'));
    expect(restored(w)).toBeUndefined();
  });
});
