import { describe, expect, it } from 'vitest';
import { Shutdown } from './shutdown.ts';

describe('Shutdown', () => {
  it('stops newest first, goes on past a failing or hanging step, and runs once', async () => {
    const said: string[] = [];
    const order: string[] = [];
    const s = new Shutdown((m) => said.push(m));
    s.add('cluster', async () => order.push('cluster'));
    s.add('hangs', () => new Promise(() => {}), 20);
    s.add('fails', async () => {
      order.push('fails');
      throw new Error('boom');
    });
    s.add('webhook', async () => order.push('webhook'));
    expect(s.started).toBe(false);
    const first = s.run();
    expect(s.started).toBe(true);
    expect(s.run()).toBe(first);
    await first;
    expect(order).toEqual(['webhook', 'fails', 'cluster']);
    expect(said).toEqual(['fails: boom; going on', 'hangs: did not stop within 0.02 s; going on']);
  });
});
