// claimctl claim create|wait|release on core's in-memory API model, the reconcilers playing the
// controller while the command waits (a watch), FakeTimers its clock.
import type { ApiModel } from '@claimkit/core/model';
import { type FakeTimers, servingPoolWorld } from '@claimkit/core/testing';
import { describe, expect, test } from 'vitest';
import { run } from './cli.ts';
import type { Ctx } from './context.ts';
import { makeStyle } from './output.ts';

// minIdle keeps the warm pods (with 0 the pool would scale its Idle pods down).
const cluster = (idlePods: number, maxPods: number) =>
  servingPoolWorld({ idlePods, maxPods, minIdle: idlePods });

/** Starts claimctl; resolves with its exit code and output once it ends. */
function claimctl(model: ApiModel, timers: FakeTimers, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const ctx: Ctx = {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    style: makeStyle(false),
    now: () => timers.now(),
    env: {},
    timers,
    connect: async () => ({ client: model, namespace: 'default' }),
  };
  return run(argv, ctx).then((code) => ({ code, out: out.join('\n'), err: err.join('\n') }));
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('claimctl claim create|wait|release', () => {
  test('create --wait: exit 0 once Bound, with the pod, node and address (text and json)', async () => {
    const { w, timers, claims, control } = await cluster(2, 4);
    const text = claimctl(w.model, timers, 'claim', 'create', 'web', '--name', 'app', '--wait');
    await tick();
    await control();
    const r = await text;
    expect(r.code).toBe(0);
    // Which of the two Idle pods: the claim's pick (by its UID's hash without the router's order).
    const first =
      /^podclaim\.claimkit\.dev\/app bound to pod (web-[01]) on node n1 at 10\.0\.0\.[12] ports http:8080$/.exec(
        r.out,
      );
    expect(first, r.out).not.toBeNull();
    const json = claimctl(w.model, timers, 'claim', 'create', 'web', '--wait', '-o', 'json');
    await tick();
    await control(2);
    const j = JSON.parse((await json).out);
    const other = first![1] === 'web-0' ? 'web-1' : 'web-0';
    expect(j).toMatchObject({ namespace: 'default', pool: 'web', pod: other, node: 'n1' });
    expect(j.claim).toMatch(/^web-/);
    expect(j.address.podIPs).toEqual([other === 'web-0' ? '10.0.0.1' : '10.0.0.2']);
    expect(claims()).toHaveLength(2);
  });

  test('create --wait with no pod in time: exit 1, the reason, the claim deleted (kept with --keep)', async () => {
    // No pod is ever Ready (the model runs no kubelet): the claim says NoReadyPod.
    const { w, timers, claims, control } = await cluster(0, 4);
    const p = claimctl(w.model, timers, 'claim', 'create', 'web', '--wait', '--timeout', '2s');
    await tick();
    await control();
    timers.advance(2000);
    const r = await p;
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/got no pod of pool web within 2000 ms \(NoReadyPod: .*\); it was deleted/);
    await control();
    expect(claims()).toEqual([]);
    const kept = claimctl(
      w.model,
      timers,
      'claim',
      'create',
      'web',
      '--name',
      'k',
      '--wait',
      '--timeout',
      '1s',
      '--keep',
    );
    await tick();
    timers.advance(1000);
    expect((await kept).code).toBe(1);
    expect(claims().map((c) => c.metadata.name)).toEqual(['k']);
  });

  test('create without --wait prints the claim (-o name); wait then waits for it; release deletes it', async () => {
    const { w, timers, claims, control } = await cluster(1, 4);
    const made = await claimctl(w.model, timers, 'claim', 'create', 'web', '--name', 'later', '-o', 'name');
    expect(made).toMatchObject({ code: 0, out: 'podclaim.claimkit.dev/later' });
    const waiting = claimctl(w.model, timers, 'claim', 'wait', 'later', '-o', 'yaml');
    await tick();
    await control();
    const r = await waiting;
    expect(r.code).toBe(0);
    expect(r.out).toContain('pod: web-0');
    const rel = await claimctl(w.model, timers, 'claim', 'release', 'later');
    expect(rel.code).toBe(0);
    await control();
    expect(claims()).toEqual([]);
    // Waiting for a claim that is not there: exit 2.
    expect((await claimctl(w.model, timers, 'claim', 'wait', 'later')).code).toBe(2);
  });

  test('a claim the API server refuses: exit 4', async () => {
    const { w, timers } = await cluster(1, 4);
    const r = await claimctl(w.model, timers, 'claim', 'create', 'web', '--name', 'Not_A_Name');
    expect(r.code).toBe(4);
    expect(r.err).toMatch(/refused the PodClaim: Invalid \(422\)/);
    const r2 = await claimctl(w.model, timers, 'claim', 'create', 'web', '--name', 'Not_A_Name', '--wait');
    expect(r2.code).toBe(4);
  });

  test('usage: create-only flags elsewhere, --keep without --wait', async () => {
    const { w, timers } = await cluster(0, 1);
    expect((await claimctl(w.model, timers, 'claim', 'wait', 'x', '--wait')).code).toBe(2);
    expect((await claimctl(w.model, timers, 'claim', 'create', 'web', '--keep')).code).toBe(2);
    expect((await claimctl(w.model, timers, 'claim', 'frobnicate', 'x')).code).toBe(2);
  });
});
