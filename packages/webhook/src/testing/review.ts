// Test helpers: AdmissionReview requests and small objects for the five kinds.
import {
  ANNOTATION_CLAIMED_BY_UID,
  API_VERSION,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
} from '@claimkit/core';
import { MemoryPodClaimIndex, type Operation, type UserInfo } from '@claimkit/core/admission';
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

// ---------- objects ----------
export function pod(
  name: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `pod-uid-${name}`, labels, annotations },
    spec: { containers: [{ name: 'main', image: 'busybox' }] },
  };
}

export function poolPod(
  name: string,
  state: string | undefined,
  claim?: { name: string; uid: string },
): unknown {
  const labels: Record<string, string> = { [LABEL_POOL]: 'web' };
  if (state !== undefined) labels[LABEL_STATE] = state;
  const annotations: Record<string, string> = {};
  if (claim) {
    labels[LABEL_CLAIMED_BY] = claim.name;
    annotations[ANNOTATION_CLAIMED_BY_UID] = claim.uid;
  }
  return pod(name, labels, annotations);
}

export function capture(status: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: API_VERSION,
    kind: 'Capture',
    metadata: { name: 'cap', namespace: 'default', uid: 'cap-uid' },
    spec: { selector: { matchLabels: { app: 'x' } }, backend: { type: 'External' } },
    status,
  };
}

export function claimStatus(holder: string, token: number): Record<string, unknown> {
  return {
    holder: { name: holder, uid: `${holder}-uid` },
    token,
    acquireTime: '2026-01-01T00:00:00Z',
    renewTime: '2026-01-01T00:00:00Z',
    leaseSeconds: 3000,
  };
}

export function result(token: number, from = 'pod-a'): Record<string, unknown> {
  return {
    ref: `snap-${token}`,
    token,
    capturedFrom: { name: from, uid: `${from}-uid` },
    completionTime: '2026-01-01T00:10:00Z',
  };
}

export function podClaim(
  name: string,
  spec: Record<string, unknown>,
  meta: Record<string, unknown> = {},
): unknown {
  return {
    apiVersion: API_VERSION,
    kind: 'PodClaim',
    metadata: { name, namespace: 'default', uid: `${name}-uid`, ...meta },
    spec: { poolName: 'web', ...spec },
  };
}

export function podClaimSet(spec: Record<string, unknown>): unknown {
  return {
    apiVersion: API_VERSION,
    kind: 'PodClaimSet',
    metadata: { name: 'set', namespace: 'default', uid: 'set-uid' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { poolName: 'web' } },
      ...spec,
    },
  };
}

export function podPool(spec: Record<string, unknown>, name = 'web'): unknown {
  return {
    apiVersion: API_VERSION,
    kind: 'PodPool',
    metadata: { name, namespace: 'default', uid: `${name}-uid` },
    spec: {
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'main', image: 'nginx' }] },
      },
      minIdle: 2,
      maxPods: 10,
      releasePolicy: 'Recycle',
      drainSeconds: 0,
      ...spec,
    },
  };
}
