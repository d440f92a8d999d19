// Test helpers: AdmissionReview requests, the app under test, and the objects these tests share
// (built with core's fixtures).
import { LABEL_POOL, type Pod, type PodClaimSet } from '@claimkit/core';
import { MemoryPodClaimIndex, type Operation, type UserInfo } from '@claimkit/core/admission';
import { type Mod, pod, podClaimSet, withLabels, withSpec } from '@claimkit/core/testing';
import type { Hono } from 'hono';
import type { AdmissionReviewOut } from '../admission.ts';
import { createWebhookApp, DEFAULT_CONTROLLER_USERNAME, type WebhookDeps } from '../app.ts';
import { silentLogger } from '../logger.ts';
import { createWebhookMetrics } from '../metrics.ts';

export const CONTROLLER: UserInfo = {
  username: DEFAULT_CONTROLLER_USERNAME,
  groups: ['system:serviceaccounts'],
};
export const ALICE: UserInfo = { username: 'alice', groups: ['system:authenticated'] };

const KINDS: Record<string, { group: string; version: string; resource: string }> = {
  Capture: { group: 'claimkit.dev', version: 'v1alpha1', resource: 'captures' },
  PodClaim: { group: 'claimkit.dev', version: 'v1alpha1', resource: 'podclaims' },
  PodClaimSet: { group: 'claimkit.dev', version: 'v1alpha1', resource: 'podclaimsets' },
  PodPool: { group: 'claimkit.dev', version: 'v1alpha1', resource: 'podpools' },
  Pod: { group: '', version: 'v1', resource: 'pods' },
};

let n = 0;
export function reviewFor(opts: {
  kind: string;
  operation?: Operation;
  object?: unknown;
  oldObject?: unknown;
  user?: UserInfo;
  subResource?: string;
  uid?: string;
}): unknown {
  const k = KINDS[opts.kind]!;
  const obj = (opts.object ?? opts.oldObject) as { metadata?: { name?: string; namespace?: string } };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: opts.uid ?? `uid-${++n}`,
      kind: { group: k.group, version: k.version, kind: opts.kind },
      resource: { group: k.group, version: k.version, resource: k.resource },
      ...(opts.subResource ? { subResource: opts.subResource } : {}),
      name: obj?.metadata?.name,
      namespace: obj?.metadata?.namespace ?? 'default',
      operation: opts.operation ?? (opts.oldObject ? 'UPDATE' : 'CREATE'),
      userInfo: opts.user ?? ALICE,
      object: opts.object ?? null,
      oldObject: opts.oldObject ?? null,
      dryRun: false,
    },
  };
}

export function testApp(over: Partial<WebhookDeps> = {}): {
  app: Hono;
  index: MemoryPodClaimIndex;
  deps: WebhookDeps;
} {
  const index = new MemoryPodClaimIndex({ synced: true });
  const deps: WebhookDeps = { index, logger: silentLogger, metrics: createWebhookMetrics(), ...over };
  return { app: createWebhookApp(deps), index: (deps.index as MemoryPodClaimIndex) ?? index, deps };
}

export async function post(
  app: Hono,
  path: string,
  body: unknown,
): Promise<{ status: number; review?: AdmissionReviewOut; text: string }> {
  const res = await app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let review: AdmissionReviewOut | undefined;
  try {
    const parsed = JSON.parse(text) as AdmissionReviewOut;
    if (parsed.kind === 'AdmissionReview') review = parsed;
  } catch {}
  return review ? { status: res.status, review, text } : { status: res.status, text };
}

// ---------- objects: core's fixture builders, composed the way these tests need ----------

/** A value of the wrong type, sent on purpose. */
export const malformed = <T>(v: unknown): T => v as T;
/** A pod labelled for pool web, without the template hash (only the controller may set that). */
export const poolPod = (name: string, ...mods: Mod<Pod>[]) =>
  pod(name, withLabels({ [LABEL_POOL]: 'web' }), ...mods);
/** A claim set whose selector and template labels are app=web, which the set tests vary. */
export const webSet = (...mods: Mod<PodClaimSet>[]) =>
  podClaimSet(
    'set',
    withSpec({
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { poolName: 'web' } },
    }),
    ...mods,
  );
