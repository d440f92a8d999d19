// The SLI pieces the Manager tests reach only by chance: fenced refusals by layer, pool writes read
// from the writes themselves, migrations from the Migrated Events, capture durations from the
// Capture's timestamps. Writes go to core's in-memory ApiModel (real resourceVersions and conflicts).
import {
  ApiError,
  type Capture,
  type EventSpec,
  intercept,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  type Pod,
  type PodClaim,
} from '@claimkit/core';
import { ApiModel, SimCaptureAgent, schemaModelOptions } from '@claimkit/core/model';
import { describe, expect, it } from 'vitest';
import { ControllerMetrics } from './metrics.ts';
import { Slis, snakeCase } from './slis.ts';

const NS = 'ns1';
const model = () => new ApiModel({ clock: { now: () => Date.now() }, ...schemaModelOptions() });
/** An Event as core's reconcilers record it. */
const event = (
  o: { kind: string; metadata: { name: string; namespace?: string } },
  type: EventSpec['type'],
  reason: string,
  message: string,
): EventSpec =>
  ({
    regarding: { kind: o.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name },
    type,
    reason,
    message,
  }) as EventSpec;
const poolPod = (name: string, labels: Record<string, string>): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, labels: { [LABEL_POOL]: 'web', ...labels } },
  spec: { containers: [{ name: 'main', image: 'web:1' }] },
});

describe('SLIs', () => {
  it('counts binds, releases and recycles from successful pod writes, and 409s on writes as api_conflict', async () => {
    const m = model();
    const metrics = new ControllerMetrics();
    const slis = new Slis(metrics, () => true);
    const c = intercept(
      m,
      slis.writeInterceptors((k) => m.tryGetNow('Pod', k)),
    );
    const idle = await m.create(poolPod('p1', { [LABEL_STATE]: 'Idle' }));
    const web = { namespace: NS, pool: 'web' };
    const key = { namespace: NS, name: 'p1' };
    await c.patch('Pod', key, { metadata: { labels: { [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: 'c1' } } });
    expect(metrics.binds.get(web)).toBe(1);
    // The same bind with the version it read before: refused by the API server's fencing.
    await expect(
      c.patch(
        'Pod',
        key,
        { metadata: { labels: { [LABEL_STATE]: 'Bound' } } },
        {
          resourceVersion: idle.metadata.resourceVersion!,
        },
      ),
    ).rejects.toThrow(ApiError);
    expect(metrics.fencedRefusals.get({ layer: 'api_conflict' })).toBe(1);
    expect(metrics.binds.get(web)).toBe(1);
    await c.patch('Pod', key, { metadata: { labels: { [LABEL_STATE]: 'Idle', [LABEL_CLAIMED_BY]: null } } });
    expect([metrics.releases.get(web), metrics.recycles.get(web)]).toEqual([1, 1]);
    // A bound pod deleted (the Delete policy): a release, not a recycle.
    await m.create(poolPod('p2', { [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: 'c2' }));
    await c.delete('Pod', { namespace: NS, name: 'p2' });
    expect([metrics.releases.get(web), metrics.recycles.get(web)]).toEqual([2, 1]);
    // An Idle pod deleted (scale-in) is not a release; reads are never refusals.
    await m.create(poolPod('p3', { [LABEL_STATE]: 'Idle' }));
    await c.delete('Pod', { namespace: NS, name: 'p3' });
    await expect(c.get('Pod', { namespace: NS, name: 'p3' })).rejects.toThrow();
    expect(metrics.releases.get(web)).toBe(2);
    expect(metrics.fencedRefusals.total()).toBe(1);
  });

  it("counts the capture agent's stale-token 409s, discarded unfenced results and admission denials by layer", async () => {
    const metrics = new ControllerMetrics();
    const slis = new Slis(metrics, () => true);
    const agent = slis.countAgentRefusals(new SimCaptureAgent(() => Date.now()));
    const req = {
      namespace: NS,
      capture: 'snap',
      pod: 'db-0',
      uid: 'u',
      container: 'main',
      node: 'n1',
      token: 2,
    };
    await agent.start('http://agent', req);
    await expect(agent.start('http://agent', { ...req, token: 1 })).rejects.toThrow(/stale token/);
    expect(metrics.fencedRefusals.get({ layer: 'capture_agent' })).toBe(1);
    const cap = { kind: 'Capture', metadata: { name: 'snap', namespace: NS } };
    slis.recorded(event(cap, 'Warning', 'ResultDiscarded', 'discarded unfenced result'), () => undefined);
    expect(metrics.fencedRefusals.get({ layer: 'result_fence' })).toBe(1);
    const pod = poolPod('x', {});
    const c = (message: string) =>
      intercept(
        intercept(model(), { request: () => Promise.reject(new ApiError('Forbidden', message)) }),
        slis.writeInterceptors(() => undefined),
      );
    await c('admission webhook "pods.claimkit.dev" denied the request: no')
      .create(pod)
      .catch(() => {});
    await c("ValidatingAdmissionPolicy 'claimkit-pods' with binding 'b' denied request")
      .create(pod)
      .catch(() => {});
    expect(metrics.fencedRefusals.get({ layer: 'webhook' })).toBe(1);
    expect(metrics.fencedRefusals.get({ layer: 'policy' })).toBe(1);
  });

  it('migrations by result from the Migrated Events, per the claim pool; capture durations from the Capture timestamps', () => {
    const metrics = new ControllerMetrics();
    const slis = new Slis(metrics, () => true);
    const claim = {
      kind: 'PodClaim',
      metadata: { name: 'c1', namespace: NS },
      spec: { poolName: 'web' },
    } as PodClaim;
    const claimOf = () => claim;
    slis.recorded(event(claim, 'Normal', 'Migrated', 'migration from a to b finished'), claimOf);
    slis.recorded(event(claim, 'Normal', 'Migrated', 'migration from b to (lost) finished'), claimOf);
    slis.recorded(event(claim, 'Normal', 'MigrationStarted', 'migrating from b to c'), claimOf);
    expect(metrics.migrations.get({ namespace: NS, pool: 'web', result: 'success' })).toBe(1);
    expect(metrics.migrations.get({ namespace: NS, pool: 'web', result: 'lost' })).toBe(1);

    const holder = { name: 'db-0', uid: 'u' };
    const claimed = {
      kind: 'Capture',
      metadata: { name: 'snap', namespace: NS },
      spec: { backend: { type: 'Http' } },
      status: {
        claim: {
          holder,
          token: 1,
          acquireTime: '2026-01-01T00:00:00Z',
          renewTime: '2026-01-01T00:00:00Z',
          leaseSeconds: 30,
        },
      },
    } as unknown as Capture;
    const done = {
      ...claimed,
      status: {
        ...claimed.status,
        result: { ref: 'r', token: 1, capturedFrom: holder, completionTime: '2026-01-01T00:01:30Z' },
      },
    } as Capture;
    slis.captureUpdated(claimed, done);
    slis.captureUpdated(done, { ...done, metadata: { ...done.metadata, labels: { x: 'y' } } }); // same result
    const labels = { namespace: NS, backend: 'Http' };
    expect(metrics.captureSeconds.count(labels)).toBe(1);
    expect(metrics.captureSeconds.sum(labels)).toBe(90);
    // Not leading: nothing observed.
    const standby = new ControllerMetrics();
    new Slis(standby, () => false).captureUpdated(claimed, done);
    expect(standby.captureSeconds.count(labels)).toBe(0);
  });

  it('check names become snake_case label values', () => {
    expect(snakeCase('FinalizerStuck')).toBe('finalizer_stuck');
    expect(snakeCase('OutdatedPodAwaitingRelease')).toBe('outdated_pod_awaiting_release');
  });
});
