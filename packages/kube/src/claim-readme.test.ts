// The README's claim example is examples/claim-a-pod.ts, word for word, and it runs: on core's
// in-memory API model with the reconcilers as the controller.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PodClaim, reconcilePodClaim } from '@claimkit/core';
import {
  idle,
  inNamespace,
  inPool,
  node,
  onNode,
  pod,
  podPool,
  podStatus,
  put,
  ready,
  withMaxPods,
  withMinIdle,
  world,
} from '@claimkit/core/testing';
import { expect, test } from 'vitest';
import { useAWarmPod } from '../examples/claim-a-pod.ts';

const root = join(import.meta.dirname, '..');

test('the README shows examples/claim-a-pod.ts as it is', () => {
  const example = readFileSync(join(root, 'examples/claim-a-pod.ts'), 'utf8');
  expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(`\`\`\`ts\n${example}\`\`\``);
});

test('the example claims a pod, answers with its address and releases the claim', async () => {
  const w = world();
  const apps = inNamespace('apps');
  await put(w.model, podPool('web', apps, withMinIdle(0), withMaxPods(2)));
  await put(w.model, node('n1'));
  await put(
    w.model,
    pod(
      'web-0',
      apps,
      inPool('web'),
      idle(),
      ready(),
      onNode('n1'),
      (p) => {
        p.spec.containers = [
          { name: 'main', image: 'web:1', ports: [{ name: 'http', containerPort: 9000 }] },
        ];
      },
      podStatus({ podIP: '10.1.0.7', podIPs: [{ ip: '10.1.0.7' }] }),
    ),
  );
  const claims = () => w.model.peek('PodClaim') as PodClaim[];
  const answer = useAWarmPod(w.model);
  // The controller's part, while the example waits.
  for (let i = 0; i < 20 && claims().every((c) => c.status?.phase !== 'Bound'); i++) {
    await new Promise((r) => setTimeout(r, 0));
    for (const c of claims()) await reconcilePodClaim(w.deps, { namespace: 'apps', name: c.metadata.name });
  }
  expect(await answer).toBe('http://10.1.0.7:9000/');
  // Leaving the example's block deleted the claim: its finalizer releases the pod.
  expect(claims().every((c) => c.metadata.deletionTimestamp)).toBe(true);
});
