// The app the benchmark serves: the real webhook app plus a no-op Hono handler on the same server,
// so the rules' cost is measured against Hono, TLS and JSON transport in the same run.

import { MemoryPodClaimIndex } from '@claimkit/core/admission';
import { Hono } from 'hono';
import { createWebhookApp } from '../src/app.ts';
import { silentLogger } from '../src/logger.ts';

const NOOP = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: 'noop', allowed: true },
});

export function benchApp(): Hono {
  const index = new MemoryPodClaimIndex({ synced: true });
  for (let i = 0; i < 1000; i++) {
    index.upsert({ metadata: { name: `claim-${i}`, namespace: 'default' }, spec: { podName: `pod-${i}` } });
  }
  const app = new Hono();
  app.post('/noop', async (c) => {
    await c.req.text(); // read the body like the real handlers do
    return c.body(NOOP, 200, { 'content-type': 'application/json' });
  });
  app.route('/', createWebhookApp({ index, logger: silentLogger }));
  return app;
}
