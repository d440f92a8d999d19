// The model's identity and validating-admission step: who a write is made as, when admission runs
// (after schema validation, on every verb), and what a denial looks like (a ValidatingAdmissionPolicy
// denial on the real server: 422 Invalid by default, 403 with reason Forbidden).
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors.ts';
import type { KubeObject } from '../api/meta.ts';
import type { PodClaim } from '../api/types.ts';
import { schemaModelOptions } from '../schema/validate.ts';
import { configMap, forCreate, forPool, podClaim } from '../testing/fixtures.ts';
import { type AdmissionRequest, CONTROLLER_USER } from './admission.ts';
import { ApiModel } from './api-model.ts';
import { ManualClock } from './clock.ts';

const k = (name: string) => ({ namespace: 'default', name });
const alice = { username: 'alice', groups: ['system:authenticated'] };

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('the write was accepted');
}

function recording(deny: (r: AdmissionRequest<KubeObject>) => boolean = () => false) {
  const seen: AdmissionRequest<KubeObject>[] = [];
  const m = new ApiModel({
    ...schemaModelOptions(),
    clock: new ManualClock(),
    admission: [
      (r) => {
        seen.push(r);
        return deny(r)
          ? [{ field: '', message: 'alice may not', by: { policy: 'no-alice', binding: 'no-alice-binding' } }]
          : [];
      },
    ],
  });
  return { m, seen };
}

describe('who writes', () => {
  it("the model's own methods write as the controller; as(user) writes as that user", async () => {
    const { m, seen } = recording();
    await m.create(forCreate(podClaim('c1', forPool('web'))));
    await m.as(alice).patch('PodClaim', k('c1'), { metadata: { labels: { a: 'b' } } });
    await m.as(alice).patchStatus('PodClaim', k('c1'), { status: { phase: 'Pending' } });
    await m.as(alice).delete('PodClaim', k('c1'));
    expect(seen.map((r) => [r.operation, r.subResource ?? '', r.userInfo.username])).toEqual([
      ['CREATE', '', CONTROLLER_USER.username],
      ['UPDATE', '', 'alice'],
      ['UPDATE', 'status', 'alice'],
      ['DELETE', '', 'alice'],
    ]);
    // Admission sees the stored object before and the object as it would be stored after.
    expect(seen[1]!.oldObject?.metadata.labels).toBeUndefined();
    expect(seen[1]!.object?.metadata.labels).toEqual({ a: 'b' });
    expect(seen[3]!.object).toBeUndefined();
    expect((seen[3]!.oldObject as PodClaim).spec.poolName).toBe('web');
  });

  it('a user client reads what the model stores, and its accepted writes persist', async () => {
    const m = new ApiModel({ clock: new ManualClock() });
    await m.as(alice).create(configMap('cm', { a: '1' }));
    await m.as(alice).update({ ...(await m.as(alice).get('ConfigMap', k('cm'))), data: { a: '2' } });
    expect(m.getNow('ConfigMap', k('cm')).data).toEqual({ a: '2' });
    expect((await m.as(alice).list('ConfigMap')).items).toHaveLength(1);
  });
});

describe('a denial', () => {
  it('answers 422 Invalid with the ValidatingAdmissionPolicy message, and writes nothing', async () => {
    const { m } = recording((r) => r.userInfo.username === 'alice');
    await m.create(forCreate(podClaim('c1', forPool('web'))));
    const rv = m.resourceVersion;
    const e = await refusal(m.as(alice).patch('PodClaim', k('c1'), { metadata: { labels: { a: 'b' } } }));
    expect([e.reason, e.code]).toEqual(['Invalid', 422]);
    const cause =
      "ValidatingAdmissionPolicy 'no-alice' with binding 'no-alice-binding' denied request: alice may not";
    expect(e.message).toBe(`podclaims.claimkit.dev "c1" is forbidden: ${cause}`);
    expect(e.causes).toEqual([{ field: '', message: cause }]);
    expect(m.resourceVersion).toBe(rv);
    expect(m.getNow('PodClaim', k('c1')).metadata.labels).toBeUndefined();
    // A refused delete leaves the object.
    const d = await refusal(m.as(alice).delete('PodClaim', k('c1')));
    expect(d.reason).toBe('Invalid');
    expect(m.tryGetNow('PodClaim', k('c1'))).toBeDefined();
  });

  it('answers 403 Forbidden when the validation names that reason; the binding defaults to the policy', async () => {
    const m = new ApiModel({
      clock: new ManualClock(),
      admission: [() => [{ field: '', message: 'no', reason: 'Forbidden', by: { policy: 'p' } }]],
    });
    const e = await refusal(m.create(configMap('cm', {})));
    expect([e.reason, e.code]).toEqual(['Forbidden', 403]);
    expect(e.message).toBe(
      `configmaps "cm" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p' denied request: no`,
    );
  });

  it('comes after schema validation: an object the CRD refuses gets the schema error', async () => {
    const { m, seen } = recording(() => true);
    const bad = forCreate(podClaim('c1', forPool('web')));
    (bad.spec as { poolName?: string }).poolName = undefined;
    const e = await refusal(m.create(bad));
    expect(e.message).toContain('is invalid');
    expect(seen).toHaveLength(0);
  });
});
