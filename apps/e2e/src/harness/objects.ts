// Objects the suites and the benchmarks create, built from a name plus the few settings that differ.
import type { PodPool } from '@claimkit/core';

export interface TestPoolOptions {
  minIdle: number;
  maxPods: number;
  drainSeconds?: number;
  releasePolicy?: 'Recycle' | 'Delete';
  /** The pods' image (never pulled on kwok nodes); default `registry.example/<name>:1`. */
  image?: string;
}

/** A PodPool whose pods carry `app: <name>` and stop at once (terminationGracePeriodSeconds 0). */
export function testPool(namespace: string, name: string, o: TestPoolOptions): PodPool {
  return {
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodPool',
    metadata: { name, namespace },
    spec: {
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{ name: 'main', image: o.image ?? `registry.example/${name}:1` }],
          terminationGracePeriodSeconds: 0,
        },
      } as PodPool['spec']['template'],
      minIdle: o.minIdle,
      maxPods: o.maxPods,
      releasePolicy: o.releasePolicy ?? 'Recycle',
      drainSeconds: o.drainSeconds ?? 0,
    },
  };
}
