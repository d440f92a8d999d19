// The event recorder and the leader elector over core's in-memory API model (they only need the
// Client port), and kubeconfig loading with its error messages.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, type Client, createLogger, type KubeEvent, type Pod } from '@claimkit/core';
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

  describe('in a pod: the standby watches the holder pod and takes over from a dead holder at once', () => {
    const C = 'controller';
    const leaseKey = { namespace: 'sys', name: 'lead' };
    async function mkPod(model: ApiModel, name: string) {
      await model.create<Pod>({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { namespace: 'sys', name },
        spec: { containers: [{ name: C, image: 'controller' }], nodeName: 'n1' },
      });
      return model.setPodStatusNow(
        { namespace: 'sys', name },
        {
          phase: 'Running',
          containerStatuses: [
            {
              name: C,
              containerID: `containerd://${name}-1`,
              restartCount: 0,
              state: { running: { startedAt: new Date(T0).toISOString() } },
            },
          ],
        },
      );
    }
    /** Two electors in pods; their loops wait (for the retry period) until stop() or a kick. */
    async function setup() {
      const clock = new ManualClock(T0);
      const model = new ApiModel({ clock });
      const lines: string[] = [];
      const log = createLogger({ level: 'debug', write: (l) => lines.push(l), now: () => clock.now() });
      const takeovers: string[] = [];
      const rounds = { a: 0, b: 0 };
      const mk = async (name: 'a' | 'b') => {
        const pod = await mkPod(model, `ctl-${name}`);
        const counting = new Proxy(model, {
          get(t, p, r) {
            const v = Reflect.get(t, p, r);
            if (p === 'get') {
              return (kind: string, key: unknown) => {
                if (kind === 'Lease') rounds[name]++;
                return v.call(t, kind, key);
              };
            }
            return typeof v === 'function' ? v.bind(t) : v;
          },
        });
        return new LeaderElector(counting, {
          namespace: 'sys',
          name: 'lead',
          identity: `ctl-${name}`,
          clock,
          log,
          pod: { namespace: 'sys', name: `ctl-${name}`, uid: pod.metadata.uid!, container: C },
          processStartMs: T0,
          rewatchDelayMs: 0,
          // The retry period never ends by itself here: only a kick or stop() ends the wait.
          sleep: (_ms, signal) =>
            new Promise((r) => signal.addEventListener('abort', () => r(), { once: true })),
          onTakeover: (prev, reason) => takeovers.push(`${name} from ${prev}: ${reason}`),
        });
      };
      const a = await mk('a');
      const b = await mk('b');
      a.start();
      await vi.waitFor(() => expect(a.isLeader()).toBe(true));
      b.start();
      await vi.waitFor(() => expect(b.leader).toBe('ctl-a'));
      return { clock, model, a, b, lines, takeovers, rounds };
    }

    it('the leader records its pod and its container incarnation (from its own pod watch) on the Lease; pod watches are opened again after they end', async () => {
      const { model, a, b } = await setup();
      const lease = model.getNow('Lease', leaseKey);
      expect(lease.metadata.annotations).toEqual({
        'claimkit.dev/holder-identity': 'ctl-a',
        'claimkit.dev/holder-pod': 'sys/ctl-a',
        'claimkit.dev/holder-uid': model.getNow('Pod', { namespace: 'sys', name: 'ctl-a' }).metadata.uid,
        'claimkit.dev/holder-container': 'controller',
        'claimkit.dev/holder-container-id': 'containerd://ctl-a-1',
        'claimkit.dev/holder-restart-count': '0',
      });
      expect(b.isLeader()).toBe(false);
      // Each watches its own pod; the standby also the holder's. A watch that ends is opened again.
      expect(model.openWatches).toBe(3);
      expect(
        model.closeWatches({ kind: 'Pod', error: new ApiError('Unavailable', 'connection reset') }),
      ).toBe(3);
      await vi.waitFor(() => expect(model.openWatches).toBe(3));
      await Promise.all([a.stop(), b.stop()]);
      expect(model.openWatches).toBe(0);
    });

    it('holder pod deleted: the watch event runs a round at once and the standby takes over, no clock advance', async () => {
      const { clock, model, a, b, lines, takeovers } = await setup();
      await model.delete('Pod', { namespace: 'sys', name: 'ctl-a' }, { gracePeriodSeconds: 0 });
      await vi.waitFor(() => expect(b.isLeader()).toBe(true));
      expect(clock.now()).toBe(T0);
      expect(takeovers).toEqual(['b from ctl-a: HolderGone']);
      expect(model.getNow('Lease', leaseKey).metadata.annotations?.['claimkit.dev/holder-pod']).toBe(
        'sys/ctl-b',
      );
      const took = lines.map((l) => JSON.parse(l)).find((o) => o.msg === 'took over the lease');
      expect(took).toMatchObject({ level: 'info', previousHolder: 'ctl-a', reason: 'HolderGone' });
      await Promise.all([a.stop(), b.stop()]);
    });

    it('holder container killed (its status terminated): the standby takes over on the status change', async () => {
      const { model, a, b, takeovers } = await setup();
      model.setPodStatusNow(
        { namespace: 'sys', name: 'ctl-a' },
        {
          phase: 'Running',
          containerStatuses: [
            {
              name: C,
              containerID: 'containerd://ctl-a-1',
              restartCount: 0,
              state: { terminated: { exitCode: 137 } },
            },
          ],
        },
      );
      await vi.waitFor(() => expect(b.isLeader()).toBe(true));
      expect(takeovers).toEqual(['b from ctl-a: HolderContainerTerminated']);
      await Promise.all([a.stop(), b.stop()]);
    });

    it('a change of a live holder pod runs a round, but no takeover', async () => {
      const { model, a, b, rounds } = await setup();
      const before = rounds.b;
      model.setPodStatusNow(
        { namespace: 'sys', name: 'ctl-a' },
        {
          ...model.getNow('Pod', { namespace: 'sys', name: 'ctl-a' }).status,
          conditions: [{ type: 'Ready', status: 'False' }],
        },
      );
      await vi.waitFor(() => expect(rounds.b).toBeGreaterThan(before));
      expect(b.isLeader()).toBe(false);
      expect(model.getNow('Lease', leaseKey).spec.holderIdentity).toBe('ctl-a');
      await Promise.all([a.stop(), b.stop()]);
    });
  });

  it('outside a pod: no record on the Lease and no pod watch, as before', async () => {
    const model = new ApiModel({ clock: new ManualClock(T0) });
    const e = new LeaderElector(model, {
      namespace: 'sys',
      name: 'lead',
      identity: 'a',
      clock: model.clock,
      sleep: (_ms, signal) => new Promise((r) => signal.addEventListener('abort', () => r(), { once: true })),
    });
    e.start();
    await vi.waitFor(() => expect(e.isLeader()).toBe(true));
    expect(model.openWatches).toBe(0);
    expect(model.getNow('Lease', { namespace: 'sys', name: 'lead' }).metadata.annotations).toBeUndefined();
    await e.stop();
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
