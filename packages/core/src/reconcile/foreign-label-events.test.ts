// A replay finding: claim B is bound to pod X whose claimed-by label names claim L (which references
// another pod). Whichever claim reconciles first repairs the label; either way the repair of someone
// else's state leaves a Warning Event on the pod and on both claims (before, only B's order did, and
// only on B), and B keeps X.
import { describe, expect, test } from 'vitest';
import { LABEL_CLAIMED_BY } from '../api/constants.ts';
import type { EventSpec } from '../api/decision.ts';
import type { PodClaim } from '../api/types.ts';
import {
  boundTo,
  claimedBy,
  createdAt,
  inPool,
  onNode,
  pod,
  podClaim,
  podPool,
  ready,
  withReleaseFinalizer,
  withState,
} from '../testing/fixtures.ts';
import { putAll } from '../testing/model-helpers.ts';
import { settleAll, type World, world } from '../testing/world.ts';
import { reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodPool } from './podpool/index.ts';

const webClaim = (name: string, ...mods: Parameters<typeof podClaim>[1][]) =>
  podClaim(
    name,
    (c) => {
      c.spec.poolName = 'web';
    },
    withReleaseFinalizer(),
    ...mods,
  );

const poolPod = (name: string, ...mods: Parameters<typeof pod>[1][]) =>
  pod(name, inPool('web'), withState('Bound'), onNode('n1'), ready(), ...mods);

/** B references X; X is labelled for L, which references Y (and Y is labelled for L). */
async function foreignLabel(w: World) {
  const [, l] = (await putAll(
    w.model,
    podPool('web', (p) => {
      p.spec.minIdle = 0;
    }),
    webClaim('claim-l', createdAt(0), boundTo('pod-y', 'n1')),
    webClaim('claim-b', createdAt(1), boundTo('pod-x', 'n1')),
  )) as [unknown, PodClaim];
  await putAll(w.model, poolPod('pod-x', claimedBy(l)), poolPod('pod-y', claimedBy(l)));
}

const warningsOn = (events: EventSpec[], kind: string, name: string) =>
  events.filter((e) => e.type === 'Warning' && e.regarding.kind === kind && e.regarding.name === name);

function expectRepairRecorded(w: World) {
  for (const [kind, name] of [
    ['Pod', 'pod-x'],
    ['PodClaim', 'claim-b'],
    ['PodClaim', 'claim-l'],
  ] as const) {
    const ws = warningsOn(w.events, kind, name);
    expect(
      ws.map((e) => e.reason),
      `${kind} ${name}`,
    ).toContain('ForeignLabelRemoved');
    const msg = ws.find((e) => e.reason === 'ForeignLabelRemoved')!.message;
    expect(msg).toContain('pod-x');
    expect(msg).toContain('claim-l');
    expect(msg).toContain('claim-b');
  }
  // Pod Y, which L holds, is nobody's repair.
  expect(warningsOn(w.events, 'Pod', 'pod-y')).toEqual([]);
}

async function settle(w: World) {
  await settleAll(w, reconcilePodClaim, 'PodClaim', ['claim-b', 'claim-l'], {
    eachRound: () => reconcilePodPool(w.deps, w.key('web')),
  });
  expect(w.get('PodClaim', 'claim-b').status?.podName).toBe('pod-x');
  expect(w.get('Pod', 'pod-x').metadata.labels?.[LABEL_CLAIMED_BY]).toBe('claim-b');
  expect(w.get('Pod', 'pod-y').metadata.labels?.[LABEL_CLAIMED_BY]).toBe('claim-l');
  expect(w.tracker.violations).toEqual([]);
}

describe('a foreign claimed-by label is never repaired without a trace', () => {
  test('B (which references the pod) reconciles first', async () => {
    const w = world();
    await foreignLabel(w);
    await reconcilePodClaim(w.deps, w.key('claim-b'));
    expect(w.get('Pod', 'pod-x').metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    expectRepairRecorded(w);
    await settle(w);
  });

  test('L (which the label names) reconciles first', async () => {
    const w = world();
    await foreignLabel(w);
    await reconcilePodClaim(w.deps, w.key('claim-l'));
    expect(w.get('Pod', 'pod-x').metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    expectRepairRecorded(w);
    await settle(w);
  });
});
