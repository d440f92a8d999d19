// The rules of PodPools (DESIGN.md "PodPool", invariants P8 and S1, the template rollout), each with
// every place that enforces or checks it.
import type { Rule } from './places.ts';
import { checker, controller, crdRule, doctor, inCore, policyRule, safetyRule, webhook } from './places.ts';

export const POOL_RULES: readonly Rule[] = [
  {
    id: 'P8',
    invariant: 'P8',
    statement:
      'a pool never has more pods than `maxPods`, terminating ones included (one active replica); with several active replicas it converges to no Idle pod above `maxPods` once quiet',
    places: [
      inCore(
        'pool/expectations.ts',
        ['PoolExpectations'],
        'no create while earlier ones are not in the cache yet',
      ),
      inCore(
        'pool/scaling.ts',
        ['const room = Math.max(0, pool.spec.maxPods - podCount)'],
        'terminating pods count against `maxPods`',
      ),
      doctor('CK014'),
      checker('checkPoolSizes'),
      checker('checkPoolExcessIdle'),
    ],
  },
  {
    id: 'S1',
    invariant: 'S1',
    statement: 'a pool pod is seeded only from a (capture, token, ref) that stood fenced',
    places: [
      safetyRule('judgePoolSource'),
      policyRule(
        'pool-pod-labels',
        'metadata.annotations[claimkit.dev/source-capture]: is set only by the claimkit controller; anyone may remove it',
      ),
      controller(
        'pool/source.ts',
        ['CONDITION_SOURCE_READY', "'ResultNotFenced'"],
        'condition `SourceReady=False` (`ResultNotFenced`, ...) and no pod created from the result',
      ),
      checker('InvariantTracker'),
    ],
  },
  {
    id: 'rollout',
    invariant: 'rollout',
    statement:
      'a template change replaces Idle pods (within `maxPods`) and deletes, not recycles, outdated Bound pods on release; once quiet no Idle pod is outdated and the Idle target is met',
    places: [
      inCore(
        'pool/rollout.ts',
        ['outdatedIdleToDelete'],
        'an outdated Idle pod goes once current ones keep the target',
      ),
      inCore('pool/template-hash.ts', ['releasePolicyFor'], 'a released outdated pod is deleted'),
      doctor('CK015', 'Info: outdated Bound pods wait for their claims'),
      checker('checkPoolRollout'),
    ],
  },
  {
    id: 'pool-min-idle',
    statement: 'PodPool: `minIdle` does not exceed `maxPods`',
    places: [crdRule('PodPool', 'minIdle must not exceed maxPods'), webhook('/validate/podpools')],
  },
];
