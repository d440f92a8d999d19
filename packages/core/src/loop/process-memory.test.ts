// The process memory fed by a cache's pod events, as the Manager feeds it from its Pod informer and
// each simulated replica from its CacheView: the pool pod index shows what the cache shows after
// adds, updates, deletes and a relist, and a memory built over a synced cache (a restart) starts
// from the cache's content.
import { describe, expect, it } from 'vitest';
import { ApiModel } from '../model/api-model.ts';
import { CacheView } from '../model/cache-view.ts';
import { forCreate, inPool, pod, withState } from '../testing/fixtures.ts';
import { ProcessMemory } from './process-memory.ts';
import { cachedForm } from './watch-table.ts';

const NS = 'default';
const quiet = (m: ProcessMemory) => m.poolPods.view(NS, 'web').quietCount;
const others = (m: ProcessMemory) =>
  m.poolPods
    .view(NS, 'web')
    .others()
    .map((p) => p.metadata.name);

function memoryOver(cache: CacheView): ProcessMemory {
  const memory = new ProcessMemory(() => 0);
  cache.addHandler('Pod', memory.podHandler);
  return memory;
}

describe('ProcessMemory fed by a cache', () => {
  it('follows adds, updates and deletes as the cache applies them', async () => {
    const model = new ApiModel();
    const cache = new CacheView(model, 0, cachedForm);
    const memory = memoryOver(cache);
    await model.create(forCreate(pod('a', inPool('web'), withState('Idle'))));
    await model.create(forCreate(pod('b', inPool('web'), withState('Idle'))));
    cache.sync();
    expect(quiet(memory)).toBe(2);
    await model.patch(
      'Pod',
      { namespace: NS, name: 'b' },
      { metadata: { labels: { 'claimkit.dev/state': 'Bound' } } },
    );
    await model.delete('Pod', { namespace: NS, name: 'a' });
    // Nothing changes until the cache takes the events in (the index is the cache's, not the model's).
    expect(quiet(memory)).toBe(2);
    cache.sync();
    expect(quiet(memory)).toBe(0);
    expect(others(memory)).toEqual(['b']);
  });

  it('a relist reports what changed while the cache was behind', async () => {
    const model = new ApiModel({ eventWindow: 2 });
    const cache = new CacheView(model, 0, cachedForm);
    const memory = memoryOver(cache);
    await model.create(forCreate(pod('a', inPool('web'), withState('Idle'))));
    cache.sync();
    expect(quiet(memory)).toBe(1);
    // More events than the model keeps: the cache relists.
    await model.delete('Pod', { namespace: NS, name: 'a' });
    for (const n of ['b', 'c', 'd']) await model.create(forCreate(pod(n, inPool('web'), withState('Idle'))));
    cache.sync();
    expect(quiet(memory)).toBe(3);
    expect(memory.poolPods.view(NS, 'web').quietNamed('a')).toBeUndefined();
  });

  it('a memory built over a synced cache (a restarted process) starts from what the cache holds', async () => {
    const model = new ApiModel();
    await model.create(forCreate(pod('a', inPool('web'), withState('Idle'))));
    const cache = new CacheView(model, 0, cachedForm);
    expect(quiet(memoryOver(cache))).toBe(1);
  });

  it('keeps what the watch table keeps of a pod, not the whole object', async () => {
    const model = new ApiModel();
    const cache = new CacheView(model, 0, cachedForm);
    const memory = memoryOver(cache);
    await model.create(
      forCreate(
        pod('a', inPool('web'), withState('Idle'), (p) => {
          p.spec.tolerations = [{ key: 'k', operator: 'Exists' }];
        }),
      ),
    );
    cache.sync();
    const kept = memory.poolPods.view(NS, 'web').quietNamed('a');
    expect(kept?.metadata.name).toBe('a');
    expect(kept?.spec.tolerations).toBeUndefined();
  });
});
