// The SLI pieces the Manager tests reach only by chance: fenced refusals by layer, pool writes
// counted by the intents of applied writes, migrations and takeovers from the Events' structured
// detail, capture durations from the Capture's timestamps. Writes go to core's in-memory ApiModel (real resourceVersions and conflicts).
import {
  ApiError,
  applyDecision,
  type Capture,
  event as coreEvent,
  type EventSpec,
  intercept,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  type Pod,
  type PodClaim,
  SAFETY_RULES,
  type Write,
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
  it('counts binds, releases and recycles from the intents of applied writes, never a relabel; 409s on writes as api_conflict', async () => {
    const m = model();
    const metrics = new ControllerMetrics();
    const slis = new Slis(metrics, () => true);
    const c = intercept(m, slis.refusalInterceptors());
    const web = { namespace: NS, pool: 'web' };
    const claim = {
      kind: 'PodClaim',
      metadata: { name: 'c1', namespace: NS, uid: 'u1' },
      spec: { poolName: 'web' },
    } as PodClaim;
    const step = async (...writes: Write[]) => {
      const decision = { writes, events: [] };
      slis.applied([{ decision, result: await applyDecision(c, decision) }]);
    };
    const idle = await m.create(poolPod('p1', { [LABEL_STATE]: 'Idle' }));
    await step(SAFETY_RULES.bindPodWrite(idle, claim));
    expect(metrics.binds.get(web)).toBe(1);
    // The same bind with the version it read before: refused by the API server's fencing, not counted.
    await step(SAFETY_RULES.bindPodWrite(idle, claim));
    expect(metrics.fencedRefusals.get({ layer: 'api_conflict' })).toBe(1);
    expect(metrics.binds.get(web)).toBe(1);
    // The claim labels the pod it holds again (its label was removed): a relabel, not a second bind.
    const unlabelled = await m.patch(
      'Pod',
      { namespace: NS, name: 'p1' },
      { metadata: { labels: { [LABEL_CLAIMED_BY]: null } } },
    );
    await step({ ...SAFETY_RULES.bindPodWrite(unlabelled, claim), intent: { act: 'relabel', pool: 'web' } });
    expect(metrics.binds.get(web)).toBe(1);
    // Released back to Idle (Recycle): a release and a recycle.
    const bound = m.getNow('Pod', { namespace: NS, name: 'p1' });
    await step(SAFETY_RULES.releasePodWrite(bound, 'Recycle', 'release'));
    expect([metrics.releases.get(web), metrics.recycles.get(web)]).toEqual([1, 1]);
    // A bound pod released by deletion (the Delete policy): a release, not a recycle; once gone, a
    // second delete released nothing.
    const p2 = await m.create(poolPod('p2', { [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: 'c1' }));
    await step(SAFETY_RULES.releasePodWrite(p2, 'Delete', 'release'));
    await step(SAFETY_RULES.releasePodWrite(p2, 'Delete', 'release'));
    expect([metrics.releases.get(web), metrics.recycles.get(web)]).toEqual([2, 1]);
    // A write without an intent (an Idle pod deleted at scale-in) counts nothing; reads are never refusals.
    await m.create(poolPod('p3', { [LABEL_STATE]: 'Idle' }));
    await step({ op: 'delete', kind: 'Pod', key: { namespace: NS, name: 'p3' }, why: 'scale in' });
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
    slis.recorded(event(cap, 'Warning', 'ResultDiscarded', 'discarded unfenced result'));
    expect(metrics.fencedRefusals.get({ layer: 'result_fence' })).toBe(1);
    const pod = poolPod('x', {});
    const c = (message: string) =>
      intercept(
        intercept(model(), { request: () => Promise.reject(new ApiError('Forbidden', message)) }),
        slis.refusalInterceptors(),
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

  it("migrations and takeovers from the Events' structured detail, never their text; capture durations from the Capture timestamps", () => {
    const metrics = new ControllerMetrics();
    const slis = new Slis(metrics, () => true);
    const claim = {
      kind: 'PodClaim',
      metadata: { name: 'c1', namespace: NS },
      spec: { poolName: 'web' },
    } as PodClaim;
    slis.recorded(coreEvent(claim, 'Normal', 'Migrated', 'to b', { migration: 'success', pool: 'web' }));
    // The text says "(lost)", the detail says success: the detail counts.
    slis.recorded(coreEvent(claim, 'Normal', 'Migrated', 'to (lost)', { migration: 'success', pool: 'web' }));
    slis.recorded(coreEvent(claim, 'Normal', 'Migrated', 'to (lost)', { migration: 'lost', pool: 'web' }));
    slis.recorded(event(claim, 'Normal', 'MigrationStarted', 'migrating from b to c'));
    expect(metrics.migrations.get({ namespace: NS, pool: 'web', result: 'success' })).toBe(2);
    expect(metrics.migrations.get({ namespace: NS, pool: 'web', result: 'lost' })).toBe(1);
    const cap = { kind: 'Capture', metadata: { name: 'snap', namespace: NS } };
    slis.recorded(
      coreEvent(cap, 'Warning', 'TakenOver', 'taken over (PodDeleted)', { takeover: 'LeaseExpired' }),
    );
    expect(metrics.takeovers.get({ reason: 'LeaseExpired' })).toBe(1);
    expect(metrics.takeovers.get({ reason: 'PodDeleted' })).toBe(0);

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
