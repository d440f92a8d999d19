// The README's claim example is examples/claim-a-pod.ts, word for word, and it runs: on core's
// in-memory API model with the reconcilers as the controller.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { servingPoolWorld } from '@claimkit/core/testing';
import { expect, test } from 'vitest';
import { useAWarmPod } from '../examples/claim-a-pod.ts';

const root = join(import.meta.dirname, '..');

test('the README shows examples/claim-a-pod.ts as it is', () => {
  const example = readFileSync(join(root, 'examples/claim-a-pod.ts'), 'utf8');
  expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(`\`\`\`ts\n${example}\`\`\``);
});

test('the example claims a pod, answers with its address and releases the claim', async () => {
  const { w, claims, control } = await servingPoolWorld({ namespace: 'apps', maxPods: 2, port: 9000 });
  const answer = useAWarmPod(w.model);
  await control(); // the controller's part, while the example waits
  expect(await answer).toBe('http://10.0.0.1:9000/');
  // Leaving the example's block deleted the claim: its finalizer releases the pod.
  expect(claims().every((c) => c.metadata.deletionTimestamp)).toBe(true);
});
