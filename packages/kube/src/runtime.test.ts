// The event recorder and the leader elector over core's in-memory API model (they only need the
// Client port), and kubeconfig loading with its error messages.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, type Client, createLogger, type KubeEvent } from '@claimkit/core';
import { ApiModel, ManualClock } from '@claimkit/core/model';
import { describe, expect, it, vi } from 'vitest';
import { KubeEventRecorder } from './events.ts';
import { KubeConfigError, loadKubeConfig } from './kubeconfig.ts';
import { LeaderElector } from './leader.ts';

const T0 = Date.UTC(2026, 0, 1);
const spec = {
  regarding: { kind: 'PodClaim' as const, namespace: 'ns', name: 'c1', uid: 'u1' },
  type: 'Warning' as const,
  reason: 'Lost',
  message: 'pod p1 is gone',
};

describe('KubeEventRecorder', () => {
  it('creates an Event, aggregates repeats within the window, starts over after it', async () => {
    const clock = new ManualClock(T0);
    const model = new ApiModel({ clock });
    const rec = new KubeEventRecorder(model, { component: 'claimkit-controller', instance: 'pod-0', clock });
    await rec.record(spec);
    clock.advance(60_000);
    await Promise.all([rec.record(spec), rec.record(spec)]);
    let events = model.listNow('Event') as KubeEvent[];
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      involvedObject: {
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'PodClaim',
        name: 'c1',
        namespace: 'ns',
        uid: 'u1',
      },
      reason: 'Lost',
      type: 'Warning',
      count: 3,
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:01:00Z',
      source: { component: 'claimkit-controller', host: 'pod-0' },
    });
    clock.advance(11 * 60_000);
    await rec.record(spec);
    await rec.record({ ...spec, message: 'another message' });
    events = model.listNow('Event') as KubeEvent[];
    expect(events.map((e) => e.count)).toEqual([3, 1, 1]);
  });

  it('never throws: failures go to onError', async () => {
    const errors: unknown[] = [];
    const failing = {
      create: async () => {
        throw new ApiError('Forbidden', 'events is forbidden');
      },
      patch: async () => {
        throw new ApiError('Forbidden', 'events is forbidden');
      },
    } as unknown as Client;
    const rec = new KubeEventRecorder(failing, { component: 'x', onError: (e) => errors.push(e) });
    await expect(rec.record(spec)).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
  });
});

describe('LeaderElector rounds on the API model', () => {
  it('leads, loses the lease to a takeover after its renewals stop, gives up after the renew deadline on errors', async () => {
    const clock = new ManualClock(T0);
    const model = new ApiModel({ clock });
    const log: string[] = [];
    const mk = (id: string, client: Client = model) =>
      new LeaderElector(client, {
        namespace: 'sys',
        name: 'lead',
        identity: id,
        leaseDurationSeconds: 15,
        renewDeadlineSeconds: 10,
        clock,
        onStartedLeading: () => log.push(`${id} +`),
        onStoppedLeading: () => log.push(`${id} -`),
        onNewLeader: (h) => log.push(`${id} sees ${h}`),
      });
    const a = mk('a');
    const b = mk('b');
    await a.step();
    await b.step();
    expect([a.isLeader(), b.isLeader()]).toEqual([true, false]);
    clock.advance(16_000); // a stopped renewing
    await b.step();
    await a.step();
    expect([a.isLeader(), b.isLeader()]).toEqual([false, true]);
    // b's API calls fail: it keeps leading until the renew deadline, then stops.
    let down = false;
    const flaky = new Proxy(model, {
      get(t, p, r) {
        const v = Reflect.get(t, p, r);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          if (down) return Promise.reject(new ApiError('Unavailable', 'connection refused'));
          return v.apply(t, args);
        };
      },
    });
    const b2 = mk('b', flaky);
    await b2.step();
    expect(b2.isLeader()).toBe(true);
    down = true;
    clock.advance(5000);
    await b2.step();
    expect(b2.isLeader()).toBe(true);
    clock.advance(6000);
    await b2.step();
    expect(b2.isLeader()).toBe(false);
    expect(log).toEqual([
      'a sees a',
      'a +',
      'b sees a',
      'b sees b',
      'b +',
      'a sees b',
      'a -',
      'b sees b',
      'b +',
      'b -',
    ]);
  });

  it("start(handlers): the Manager's handlers hear leadership besides the callbacks; changes are logged; stop() releases", async () => {
    const clock = new ManualClock(T0);
    const model = new ApiModel({ clock });
    const lines: string[] = [];
    const log = createLogger({ level: 'debug', write: (l) => lines.push(l), now: () => clock.now() });
    const heard: string[] = [];
    const e = new LeaderElector(model, {
      namespace: 'sys',
      name: 'lead',
      identity: 'a',
      clock,
      log,
      // One round, then wait for stop().
      sleep: (_ms, signal) => new Promise((r) => signal.addEventListener('abort', () => r(), { once: true })),
      onStartedLeading: () => heard.push('option +'),
      onStoppedLeading: () => heard.push('option -'),
    });
    e.start({
      onStartedLeading: () => heard.push('manager +'),
      onStoppedLeading: () => {
        heard.push('manager -');
        throw new Error('handler broke');
      },
    });
    await vi.waitFor(() => expect(e.isLeader()).toBe(true));
    await e.stop();
    expect(e.isLeader()).toBe(false);
    expect(heard).toEqual(['option +', 'manager +', 'option -', 'manager -']);
    expect(model.getNow('Lease', { namespace: 'sys', name: 'lead' }).spec.holderIdentity).toBe('');
    expect(
      lines.map((l) => {
        const o = JSON.parse(l);
        return `${o.level} ${o.msg} ${o.lease} ${o.leader ?? o.identity ?? o.error}`;
      }),
    ).toEqual([
      'info leader sys/lead a',
      'info became leader sys/lead a',
      'warn stopped leading sys/lead a',
      'warn leader election sys/lead handler broke',
    ]);
  });

  it('rejects a renew deadline that is not below the lease duration', () => {
    expect(
      () =>
        new LeaderElector(new ApiModel(), {
          namespace: 'n',
          name: 'l',
          identity: 'i',
          leaseDurationSeconds: 5,
          renewDeadlineSeconds: 5,
        }),
    ).toThrow(/renewDeadlineSeconds/);
  });
});

describe('loadKubeConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claimkit-kubeconfig-'));
  const good = join(dir, 'good.yaml');
  writeFileSync(
    good,
    `apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u1
  user: {token: t}
contexts:
- name: one
  context: {cluster: c1, user: u1}
- name: broken
  context: {cluster: nope, user: u1}
current-context: one
`,
  );
  const noCurrent = join(dir, 'nocurrent.yaml');
  writeFileSync(
    noCurrent,
    `apiVersion: v1
kind: Config
clusters: [{name: c1, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u1, user: {token: t}}]
contexts: [{name: one, context: {cluster: c1, user: u1}}]
`,
  );
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'clusters: [\n  - {name: : :\n');
  const msg = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(KubeConfigError);
      return (e as Error).message;
    }
    throw new Error('expected a KubeConfigError');
  };

  it('loads a file and selects a context', () => {
    expect(loadKubeConfig({ kubeconfig: good }).getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    expect(loadKubeConfig({ kubeconfig: good, context: 'one' }).getCurrentContext()).toBe('one');
    expect(
      loadKubeConfig({ env: { KUBECONFIG: `${join(dir, 'missing')}:${good}` } }).getCurrentContext(),
    ).toBe('one');
  });

  it('explains what is wrong', () => {
    expect(msg(() => loadKubeConfig({ kubeconfig: join(dir, 'missing.yaml') }))).toMatch(
      /missing\.yaml: no such file/,
    );
    expect(msg(() => loadKubeConfig({ kubeconfig: bad }))).toMatch(/bad\.yaml: not a valid kubeconfig/);
    expect(msg(() => loadKubeConfig({ kubeconfig: good, context: 'two' }))).toMatch(
      /no context "two" \(available: one, broken\)/,
    );
    expect(msg(() => loadKubeConfig({ kubeconfig: good, context: 'broken' }))).toMatch(
      /names cluster "nope", which is not defined/,
    );
    expect(msg(() => loadKubeConfig({ kubeconfig: noCurrent }))).toMatch(
      /no current context; pass --context/,
    );
    expect(msg(() => loadKubeConfig({ env: {}, home: dir }))).toMatch(/no kubeconfig: pass --kubeconfig/);
    expect(msg(() => loadKubeConfig({ env: { KUBECONFIG: join(dir, 'nope') } }))).toMatch(
      /none of these files exists/,
    );
  });
});
