import { describe, expect, it } from 'vitest';
import type { PodClaim } from '../api/types.ts';
import { ApiModel } from '../model/api-model.ts';
import { schemaModelOptions } from '../schema/validate.ts';
import { podClaim } from '../testing/fixtures.ts';
import { OWN_WRITES_TTL_MS, OwnWrites, recordingWritesTo } from './own-writes.ts';

const NS = 'default';

function model(): ApiModel {
  return new ApiModel({ clock: { now: () => Date.now() }, ...schemaModelOptions() });
}

describe('recordingWritesTo', () => {
  it('reports the versions of every write to its own object, in order, and nothing else', async () => {
    const m = model();
    const a = (await m.create({ ...podClaim('a'), metadata: { name: 'a', namespace: NS } })) as PodClaim;
    await m.create({ ...podClaim('b'), metadata: { name: 'b', namespace: NS } });
    const written: string[] = [];
    const c = recordingWritesTo(m, 'PodClaim', { namespace: NS, name: 'a' }, written);

    const updated = await c.update({ ...a, spec: { ...a.spec, lostPolicy: 'Fail' } });
    const patched = await c.patchStatus(
      'PodClaim',
      { namespace: NS, name: 'a' },
      { status: { phase: 'Bound' } },
    );
    await c.patch('PodClaim', { namespace: NS, name: 'b' }, { metadata: { labels: { x: 'y' } } });
    await c.get('PodClaim', { namespace: NS, name: 'a' });

    expect(written).toEqual([updated.metadata.resourceVersion, patched.metadata.resourceVersion]);
    expect(new Set(written).size).toBe(2);
  });

  it('reports nothing when the write fails (a conflict writes no version)', async () => {
    const m = model();
    const a = (await m.create({ ...podClaim('a'), metadata: { name: 'a', namespace: NS } })) as PodClaim;
    await m.patch('PodClaim', { namespace: NS, name: 'a' }, { metadata: { labels: { x: 'y' } } });
    const written: string[] = [];
    const c = recordingWritesTo(m, 'PodClaim', { namespace: NS, name: 'a' }, written);
    await expect(c.update({ ...a, spec: { ...a.spec, lostPolicy: 'Fail' } })).rejects.toMatchObject({
      reason: 'Conflict',
    });
    expect(written).toEqual([]);
  });
});

describe('OwnWrites', () => {
  it('holds a key back while the cache shows a version we replaced ourselves', () => {
    const now = 0;
    const w = new OwnWrites(() => now);
    w.record('PodClaim|ns|a', '10', ['11', '12']);
    expect(w.cacheIsBehind('PodClaim|ns|a', '10')).toBe(true); // not even our first write seen yet
    expect(w.cacheIsBehind('PodClaim|ns|a', '11')).toBe(true); // spec seen, status not yet
    expect(w.cacheIsBehind('PodClaim|ns|a', '12')).toBe(false); // caught up: forgotten
    expect(w.size).toBe(0);
    expect(w.cacheIsBehind('PodClaim|ns|a', '11')).toBe(false);
  });

  it('never holds back the version a no-op write returned (the server made no new one)', () => {
    const w = new OwnWrites(() => 0);
    w.record('k', '10', ['10']); // a patch that changed nothing answers with the version it found
    expect(w.cacheIsBehind('k', '10')).toBe(false);
    w.record('k', '10', ['10', '11']);
    expect(w.cacheIsBehind('k', '10')).toBe(true);
    expect(w.cacheIsBehind('k', '11')).toBe(false);
  });

  it('never holds back a version someone else wrote, a deleted object, or a key past its time', () => {
    let now = 0;
    const w = new OwnWrites(() => now);
    w.record('k', '10', ['11', '12']);
    expect(w.cacheIsBehind('k', '13')).toBe(false);
    w.record('k', '10', ['11', '12']);
    expect(w.cacheIsBehind('k', undefined)).toBe(false);
    w.record('k', '10', ['11', '12']);
    now += OWN_WRITES_TTL_MS;
    expect(w.cacheIsBehind('k', '11')).toBe(false);
    w.record('other', '1', []); // a reconcile that wrote nothing leaves no record
    expect(w.size).toBe(0);
  });
});
