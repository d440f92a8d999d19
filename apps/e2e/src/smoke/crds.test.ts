// The CRDs in deploy/crds on the real API server: structural defaults and validation with field
// paths. (The full API-model conformance cases of core run elsewhere; this is the smoke check that
// the server accepts and enforces the schemas at all.)
import { describe, expect, it } from 'vitest';
import { failureStatus, type KubernetesObject } from '../harness/index.ts';
import { apiMessage } from '../harness/kube.ts';
import { e2eClients, useTestNamespace } from '../harness/vitest.ts';

const API_VERSION = 'claimkit.dev/v1alpha1';
type Obj = KubernetesObject & { spec?: Record<string, unknown> };

async function rejection(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (e) {
    return { code: await failureStatus(Promise.reject(e)), message: apiMessage(e) };
  }
  throw new Error('expected the API server to reject the write');
}

describe('CRDs', () => {
  const ns = useTestNamespace('smoke-crds');
  const objects = () => e2eClients().objects;

  it('a Capture gets the schema defaults', async () => {
    const created = await objects().create<Obj>({
      apiVersion: API_VERSION,
      kind: 'Capture',
      metadata: { name: 'defaults', namespace: ns.name },
      spec: { selector: { matchLabels: { app: 'x' } } },
    });
    expect(created.spec).toMatchObject({
      leaseSeconds: 3000,
      timeoutSeconds: 1800,
      maxAttempts: 3,
      backend: { type: 'External' },
    });
  });

  it('invalid objects are rejected with the field path', async () => {
    const missing = await rejection(
      objects().create<Obj>({
        apiVersion: API_VERSION,
        kind: 'Capture',
        metadata: { name: 'no-selector', namespace: ns.name },
        spec: {},
      }),
    );
    expect(missing.code).toBe(422);
    expect(missing.message).toContain('spec.selector');

    const http = await rejection(
      objects().create<Obj>({
        apiVersion: API_VERSION,
        kind: 'Capture',
        metadata: { name: 'http-no-url', namespace: ns.name },
        spec: { selector: { matchLabels: { app: 'x' } }, backend: { type: 'Http' } },
      }),
    );
    expect(http.code).toBe(422);
    expect(http.message).toContain('spec.backend');
  });

  it("a PodClaim's poolName is immutable (CEL)", async () => {
    const claim = await objects().create<Obj>({
      apiVersion: API_VERSION,
      kind: 'PodClaim',
      metadata: { name: 'immutable', namespace: ns.name },
      spec: { poolName: 'web' },
    });
    const changed = await rejection(
      objects().replace<Obj>({ ...claim, spec: { ...claim.spec, poolName: 'db' } }),
    );
    expect(changed.code).toBe(422);
    expect(changed.message).toContain('spec.poolName');
    expect(changed.message).toContain('poolName is immutable');
  });
});
