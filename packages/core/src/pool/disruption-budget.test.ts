// spec.disruptionBudget: the pool keeps an owned PDB over its Bound pods, follows changes, and
// deletes it when the field goes; a PDB of that name it does not own is left alone (and reported).
import { describe, expect, test } from 'vitest';
import { LABEL_POOL, LABEL_STATE } from '../api/constants.ts';
import { reconcilePodPool } from '../reconcile/podpool/index.ts';
import { podPool, withDisruptionBudget, withMinIdle } from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import { pdbNameFor } from './disruption-budget.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });

describe('disruption budget', () => {
  test('created for Bound pods with maxUnavailable 0, updated, and deleted when the field goes', async () => {
    const { model, deps } = world();
    const pool = await put(model, podPool('web', withMinIdle(0), withDisruptionBudget()));
    await reconcilePodPool(deps, key('web'));
    const pdb = model.getNow('PodDisruptionBudget', key(pdbNameFor('web')));
    expect(pdb.spec).toEqual({
      selector: { matchLabels: { [LABEL_POOL]: 'web', [LABEL_STATE]: 'Bound' } },
      maxUnavailable: 0,
    });
    expect(pdb.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'PodPool', uid: pool.metadata.uid });

    await model.patch('PodPool', key('web'), { spec: { disruptionBudget: { maxUnavailable: 2 } } });
    await reconcilePodPool(deps, key('web'));
    expect(model.getNow('PodDisruptionBudget', key(pdbNameFor('web'))).spec.maxUnavailable).toBe(2);

    await model.patch('PodPool', key('web'), { spec: { disruptionBudget: null } });
    await reconcilePodPool(deps, key('web'));
    expect(model.tryGetNow('PodDisruptionBudget', key(pdbNameFor('web')))).toBeUndefined();
  });

  test('a PDB of that name the pool does not own is left alone and reported', async () => {
    const { model, deps, reasons } = world();
    await put(model, podPool('web', withMinIdle(0), withDisruptionBudget()));
    await model.create({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: pdbNameFor('web'), namespace: NS },
      spec: { selector: { matchLabels: { app: 'other' } }, minAvailable: 1 },
    });
    await reconcilePodPool(deps, key('web'));
    expect(model.getNow('PodDisruptionBudget', key(pdbNameFor('web'))).spec).toEqual({
      selector: { matchLabels: { app: 'other' } },
      minAvailable: 1,
    });
    expect(reasons()).toContain('DisruptionBudgetConflict');
  });

  test('a negative maxUnavailable is refused by the CRD schema', async () => {
    const { model } = world();
    await expect(put(model, podPool('web', withDisruptionBudget(-1)))).rejects.toThrow(/maxUnavailable/);
  });
});
