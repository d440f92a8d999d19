import { describe, expect, it } from 'vitest';
import { ROUTES } from './app.ts';
import { validatingWebhookConfiguration } from './manifests.ts';

describe('deploy/webhook', () => {
  it('registers every route with failurePolicy Fail, sideEffects None, a timeout and v1 reviews', () => {
    const cfg = validatingWebhookConfiguration() as { webhooks: Record<string, unknown>[] };
    expect(cfg.webhooks).toHaveLength(ROUTES.length);
    for (const w of cfg.webhooks) {
      expect(w).toMatchObject({
        failurePolicy: 'Fail',
        sideEffects: 'None',
        timeoutSeconds: 5,
        admissionReviewVersions: ['v1'],
      });
      const values = (w.namespaceSelector as { matchExpressions: { values: string[] }[] })
        .matchExpressions[0]!.values;
      expect(values).toEqual(
        expect.arrayContaining(['kube-system', 'kube-public', 'kube-node-lease', 'claimkit-system']),
      );
    }
    const pods = cfg.webhooks.find((w) => w.name === 'pods.webhook.claimkit.dev')!;
    expect(pods.objectSelector).toEqual({
      matchExpressions: [{ key: 'claimkit.dev/pool', operator: 'Exists' }],
    });
    const captures = cfg.webhooks.find((w) => w.name === 'captures.webhook.claimkit.dev')!;
    expect((captures.rules as { resources: string[] }[])[0]!.resources).toEqual([
      'captures',
      'captures/status',
    ]);
  });

  it('can be pointed at a URL with a caBundle (e2e)', () => {
    const cfg = validatingWebhookConfiguration({
      clientConfig: (path) => ({ url: `https://127.0.0.1:9443${path}`, caBundle: 'Q0E=' }),
    }) as { metadata: { annotations?: unknown }; webhooks: { clientConfig: unknown }[] };
    expect(cfg.metadata.annotations).toBeUndefined();
    expect(cfg.webhooks[0]!.clientConfig).toEqual({
      url: 'https://127.0.0.1:9443/validate/captures',
      caBundle: 'Q0E=',
    });
  });
});
