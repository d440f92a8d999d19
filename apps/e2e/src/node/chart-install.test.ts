// claimkit installed as a user installs it: the packaged Helm chart, our own images (built here
// from packages/*/Dockerfile, imported into the real node), the controller with two replicas and
// the webhook as pods under the restricted Pod Security level, the API server calling the webhook
// through its Service with the CA bundle a user without cert-manager gives. Then `helm upgrade` from
// the chart of an earlier commit while claims bind and migrate, the leader's pod deleted and its
// container killed (a standby takes over without waiting for the Lease), `helm upgrade` to two
// controller shards (a Deployment and a Lease per shard, each pool's claims bound by its own shard),
// and `helm uninstall`.
// The live controller's and webhook's /metrics pass `promtool check metrics` and declare every metric
// the shipped dashboard and alerts query.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ANNOTATION_MIGRATE,
  CLAIMKIT_VERSION,
  LEASE_HOLDER_UID,
  type Pod,
  type PodClaim,
  shardOfPool,
} from '@claimkit/core';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { expectConverged } from '../chaos/helpers.ts';
import { boundEventReporters, getOrUndefined, kube, until } from '../controller/helpers.ts';
import { repoRoot } from '../harness/index.ts';
import { createTestNamespace, describeOnRealNode, e2eClients, e2eCluster } from '../harness/vitest.ts';
import { exposedMetricNames, monitoringMetricNames, runTool } from '../helm/monitoring.ts';
import { runHelm } from '../helm/subchart.ts';
import {
  deploymentsReady,
  prepareReleaseNamespace,
  RELEASE,
  removeRelease,
  SYSTEM,
  webhookReachable,
} from './chart-release.ts';
import { killContainer, realPool, runningContainer, unlessNotFound } from './helpers.ts';

/** The chart users had before this one: the last commit before the pod-identity leader election. */
export const PREVIOUS_CHART_COMMIT = '818f843';

function hasCommit(commit: string): boolean {
  try {
    execFileSync('git', ['-C', repoRoot, 'cat-file', '-e', `${commit}^{commit}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const helmInfo = inject('claimkitHelm');
const promtoolInfo = inject('claimkitPromtool');

describeOnRealNode('the packaged chart on the real node', ['controller', 'webhook', 'workload'], (node) => {
  const helm = helmInfo.path ?? '';
  if (!helm) throw new Error(`no helm for the chart install: ${helmInfo.error}`);
  const scratch = mkdtempSync(join(tmpdir(), 'claimkit-install-'));
  let ns = '';
  let valuesFile = '';
  const c = () => kube();

  const helmEnv = { ...process.env, KUBECONFIG: e2eCluster().kubeconfigPath };
  const run = async (args: string[]) => {
    const r = await runHelm(helm, args, helmEnv);
    if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
    return r.stdout;
  };

  /** The chart of a commit, packaged: git archive of deploy/helm/claimkit, then helm package. */
  async function packageChart(commit: string | undefined): Promise<string> {
    if (commit && !hasCommit(commit)) {
      // A shallow clone (CI checkouts often are) lacks the earlier commit: say so, and upgrade from
      // this commit's chart instead, which still exercises a helm upgrade with every pod replaced.
      process.stderr.write(
        `[install] commit ${commit} is not in this clone (shallow?): installing this commit's chart\n`,
      );
      return packageChart(undefined);
    }
    const out = join(scratch, commit ?? 'current');
    mkdirSync(out, { recursive: true });
    let dir = join(repoRoot, 'deploy/helm/claimkit');
    if (commit) {
      const src = join(scratch, `src-${commit}`);
      mkdirSync(src, { recursive: true });
      const tar = execFileSync('git', ['-C', repoRoot, 'archive', commit, 'deploy/helm/claimkit']);
      execFileSync('tar', ['-x', '-C', src], { input: tar });
      dir = join(src, 'deploy/helm/claimkit');
    }
    await run(['package', dir, '-d', out]);
    // The chart of an earlier commit carries that commit's version, not this one's.
    const packaged = readdirSync(out).filter((f) => /^claimkit-.*\.tgz$/.test(f));
    if (packaged.length !== 1)
      throw new Error(`helm package ${dir} wrote ${JSON.stringify(packaged)} in ${out}`);
    return join(out, packaged[0]!);
  }

  async function controllerPods(): Promise<Pod[]> {
    const pods = await c().list('Pod', {
      namespace: SYSTEM,
      labelSelector: 'app.kubernetes.io/component=controller',
    });
    return (pods.items as Pod[]).filter((p) => !p.metadata.deletionTimestamp);
  }

  async function leaseHolder(): Promise<string | undefined> {
    const lease = await unlessNotFound(
      e2eClients().coordination.readNamespacedLease({ namespace: SYSTEM, name: 'claimkit-controller' }),
    );
    return lease?.spec?.holderIdentity ?? undefined;
  }

  /** The controller pod holding the Lease (holderIdentity names the pod). */
  async function leaderPod(): Promise<Pod> {
    let found: Pod | undefined;
    await until('a controller pod holding the Lease', async () => {
      const holder = await leaseHolder();
      found = (await controllerPods()).find((p) => holder?.startsWith(p.metadata.name));
      return found !== undefined;
    });
    return found!;
  }

  async function claim(name: string, poolName = 'real'): Promise<PodClaim> {
    return (await c().create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name, namespace: ns },
      spec: { poolName },
    } as PodClaim)) as PodClaim;
  }

  async function boundWithin(name: string, since: number, timeoutMs: number): Promise<number> {
    await until(
      `PodClaim ${ns}/${name} Bound`,
      async () => {
        const cl = (await getOrUndefined(c().get('PodClaim', { namespace: ns, name }))) as
          | PodClaim
          | undefined;
        return cl?.status?.phase === 'Bound';
      },
      timeoutMs,
    );
    return Date.now() - since;
  }

  beforeAll(async () => {
    valuesFile = join(scratch, 'values.yaml');
    // JSON is YAML. The images are this version's (ghcr.io/claimkit/<c>:<version>, already on the
    // node: IfNotPresent finds them, as after a pull), pinned by tag: the earlier commit's chart
    // names its own version's images. This file tests the chart's templates across an upgrade;
    // release-publish.test.ts upgrades between two versions' images.
    const values = (await prepareReleaseNamespace(scratch)) as Record<string, Record<string, unknown>>;
    for (const component of ['controller', 'webhook'])
      values[component] = { ...values[component], image: { tag: CLAIMKIT_VERSION } };
    writeFileSync(valuesFile, JSON.stringify(values));
    ns = await createTestNamespace('install');
  }, 60_000);

  afterAll(async () => {
    await removeRelease(helm, helmEnv, ns);
    rmSync(scratch, { recursive: true, force: true });
  }, 240_000);

  it(`installs the chart of ${PREVIOUS_CHART_COMMIT} (this one in a shallow clone): every Deployment Ready under the restricted level, one leader`, async () => {
    const chart = await packageChart(PREVIOUS_CHART_COMMIT);
    await run(['install', RELEASE, chart, '-n', SYSTEM, '-f', valuesFile]);
    await deploymentsReady('helm install');
    const pods = await controllerPods();
    expect(pods).toHaveLength(2);
    for (const p of pods) expect(p.spec?.nodeName).toBe(node.name);
    const holder = await leaderPod();
    expect(pods.map((p) => p.metadata.name)).toContain(holder.metadata.name);
    await webhookReachable(ns);
  }, 240_000);

  it('binds claims to pods that run for real; the API server calls the webhook through its Service', async () => {
    await c().create(realPool(ns, 'real', { minIdle: 2, maxPods: 12 }));
    const t0 = Date.now();
    await claim('first');
    await boundWithin('first', t0, 90_000);
    const bound = (await c().get('PodClaim', { namespace: ns, name: 'first' })) as PodClaim;
    const pod = (await c().get('Pod', { namespace: ns, name: bound.status!.podName! })) as Pod;
    expect(pod.spec?.nodeName).toBe(node.name);
    expect(runningContainer(pod)).toBeDefined();
    expect(pod.status?.podIP).toMatch(/^10\.245\.0\./);
    // Every webhook pod answered admission requests for claims (the API server reached it through
    // the Service, TLS verified with the chart's caBundle): read from its own /metrics.
    const { core } = e2eClients();
    const webhookPods = (
      await core.listNamespacedPod({
        namespace: SYSTEM,
        labelSelector: 'app.kubernetes.io/component=webhook',
      })
    ).items;
    let admitted = 0;
    for (const p of webhookPods) {
      const text = String(
        await core.connectGetNamespacedPodProxyWithPath({
          namespace: SYSTEM,
          name: `https:${p.metadata?.name}:8443`,
          path: 'metrics',
        }),
      );
      for (const m of text.matchAll(
        /^claimkit_webhook_requests_total\{[^}]*path="\/validate\/podclaims"[^}]*\} (\d+)/gm,
      ))
        admitted += Number(m[1]);
    }
    expect(admitted).toBeGreaterThan(0);
  }, 180_000);

  it('helm upgrade to this commit while claims bind and migrate: no claim loses its pod', async () => {
    const lost = new Set<string>();
    let stop = false;
    const watch = (async () => {
      while (!stop) {
        for (const cl of (await c().list('PodClaim', { namespace: ns })).items as PodClaim[]) {
          if (cl.status?.phase === 'Lost') lost.add(cl.metadata.name);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    let n = 0;
    const churn = (async () => {
      while (!stop) {
        const name = `upgrade-${n++}`;
        await claim(name).catch(() => undefined);
        if (n % 3 === 0) {
          await getOrUndefined(
            c().patch(
              'PodClaim',
              { namespace: ns, name: `upgrade-${n - 2}` },
              {
                metadata: { annotations: { [ANNOTATION_MIGRATE]: `upgrade-${n}` } },
              },
            ),
          );
        }
        await new Promise((r) => setTimeout(r, 1500));
        if (n >= 8) break;
      }
    })();
    const chart = await packageChart(undefined);
    await run(['upgrade', RELEASE, chart, '-n', SYSTEM, '-f', valuesFile]);
    await deploymentsReady('helm upgrade');
    await churn;
    const t = Date.now();
    await expectConverged(ns, 'helm upgrade', t, 120_000);
    stop = true;
    await watch;
    expect([...lost]).toEqual([]);
    // The new controller pods carry their identity: the Lease records the holder's pod and UID
    // (once the new leader holds it: the old one released it when it stopped).
    await until("the Lease recording its holder pod's UID", async () => {
      const lease = await e2eClients().coordination.readNamespacedLease({
        namespace: SYSTEM,
        name: 'claimkit-controller',
      });
      const holder = (await controllerPods()).find((p) =>
        lease.spec?.holderIdentity?.startsWith(p.metadata.name),
      );
      return holder !== undefined && lease.metadata?.annotations?.[LEASE_HOLDER_UID] === holder.metadata.uid;
    });
  }, 300_000);

  it("promtool check metrics passes on every controller's and webhook's /metrics; together they declare every metric the dashboard and the alerts query; one replica leads, the standby says 0", async () => {
    const promtool = promtoolInfo.path;
    if (!promtool) throw new Error(`no promtool for the metrics check: ${promtoolInfo.error}`);
    const { core } = e2eClients();
    const pods = async (component: string) =>
      (
        await core.listNamespacedPod({
          namespace: SYSTEM,
          labelSelector: `app.kubernetes.io/component=${component}`,
        })
      ).items.filter((p) => !p.metadata?.deletionTimestamp);
    const declared = new Set<string>();
    for (const [component, target] of [
      ['controller', (pod: string) => `${pod}:8080`],
      ['webhook', (pod: string) => `https:${pod}:8443`],
    ] as const) {
      const found = await pods(component);
      expect(found.length, component).toBeGreaterThan(0);
      for (const p of found) {
        const name = p.metadata?.name ?? '';
        const text = String(
          await core.connectGetNamespacedPodProxyWithPath({
            namespace: SYSTEM,
            name: target(name),
            path: 'metrics',
          }),
        );
        const r = await runTool(promtool, ['check', 'metrics'], text);
        expect(r.code, `promtool check metrics on ${component} ${name}:\n${r.stdout}${r.stderr}`).toBe(0);
        for (const n of exposedMetricNames(text)) declared.add(n);
      }
    }
    expect(monitoringMetricNames().filter((n) => !declared.has(n))).toEqual([]);
    // Every replica exports claimkit_leader (ClaimkitNoLeader reads it): 1 on the leader, 0 on the standby.
    let leaders: (number | undefined)[] = [];
    await until('claimkit_leader 1 on one controller replica and 0 on the other', async () => {
      leaders = [];
      for (const p of await pods('controller')) {
        const text = String(
          await core.connectGetNamespacedPodProxyWithPath({
            namespace: SYSTEM,
            name: `${p.metadata?.name}:8080`,
            path: 'metrics',
          }),
        );
        const m = /^claimkit_leader (\S+)$/m.exec(text);
        leaders.push(m ? Number(m[1]) : undefined);
      }
      return JSON.stringify([...leaders].sort()) === '[0,1]';
    }).catch((e: Error) => {
      throw new Error(`${e.message}; claimkit_leader per replica: ${JSON.stringify(leaders)}`);
    });
  }, 90_000);

  /** Runs the fault on the leader, creates a claim at once: Bound within 2 s, then all converges. */
  async function standbyBindsAfter(what: string, claimName: string, fault: () => Promise<void>) {
    const t0 = Date.now();
    await fault();
    await claim(claimName);
    const ms = await boundWithin(claimName, t0, 30_000);
    process.stderr.write(`[install] ${what} -> new claim Bound in ${ms} ms\n`);
    expect(ms).toBeLessThanOrEqual(2_000);
    await deploymentsReady(`after the ${what}`);
    await expectConverged(ns, what, Date.now(), 60_000);
  }

  it('a standby binds new claims within 2 s after the leader pod is deleted', async () => {
    const leader = await leaderPod();
    await standbyBindsAfter('leader pod deleted', 'after-delete', async () => {
      await e2eClients().core.deleteNamespacedPod({ namespace: SYSTEM, name: leader.metadata.name });
    });
  }, 180_000);

  it("a standby binds new claims within 2 s after the leader's container is killed", async () => {
    const leader = await leaderPod();
    // The standby must already know the leader's container (its pod watch) before the kill.
    await until(
      'both controller replicas Ready',
      async () => (await controllerPods()).filter((p) => runningContainer(p, 'controller')).length === 2,
    );
    await new Promise((r) => setTimeout(r, 3_000));
    const container = runningContainer(leader, 'controller');
    expect(container).toBeDefined();
    await standbyBindsAfter('leader container killed', 'after-kill', () =>
      killContainer(node, container!.id),
    );
  }, 180_000);

  it("helm upgrade to controller.shards=2 while claims bind: a Deployment and a Lease per shard, each pool's claims bound by its own shard, no claim lost", async () => {
    const { apps, coordination } = e2eClients();
    // A second pool on the other shard from 'real' (the namespace's name is random: pick by hash).
    const realShard = shardOfPool(ns, 'real', 2);
    const other = Array.from({ length: 16 }, (_, i) => `shard-${i}`).find(
      (n) => shardOfPool(ns, n, 2) !== realShard,
    );
    expect(other, `a pool name on the other shard of ${ns}`).toBeDefined();
    const poolOfShard = (s: number) => (s === realShard ? 'real' : other!);
    await c().create(realPool(ns, other!, { minIdle: 2, maxPods: 8 }));
    // 'real' holds the earlier tests' 11 claims: room for this test's 5.
    await c().patch('PodPool', { namespace: ns, name: 'real' }, { spec: { maxPods: 20 } });
    const lost = new Set<string>();
    let stop = false;
    const watch = (async () => {
      while (!stop) {
        for (const cl of (await c().list('PodClaim', { namespace: ns })).items as PodClaim[])
          if (cl.status?.phase === 'Lost') lost.add(cl.metadata.name);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    // Claims on both pools while the single controller's Deployment goes and the shards' come: for
    // a while both run (the old one on every pool), which the bind's CAS on the pod keeps safe.
    const claimsDuring = (async () => {
      for (let i = 0; i < 4; i++) {
        await claim(`shards-real-${i}`);
        await claim(`shards-other-${i}`, other!);
        await new Promise((r) => setTimeout(r, 1500));
      }
    })();
    const chart = await packageChart(undefined);
    await run(['upgrade', RELEASE, chart, '-n', SYSTEM, '-f', valuesFile, '--set', 'controller.shards=2']);
    await claimsDuring;
    await until(
      'the Deployments claimkit-controller-shard-0 and -1 in place of claimkit-controller',
      async () => {
        const names = (await apps.listNamespacedDeployment({ namespace: SYSTEM })).items
          .map((d) => d.metadata?.name ?? '')
          .filter((n) => n.startsWith('claimkit-controller'))
          .sort();
        return (
          JSON.stringify(names) ===
          JSON.stringify(['claimkit-controller-shard-0', 'claimkit-controller-shard-1'])
        );
      },
      60_000,
      async () =>
        `Deployments: ${(await apps.listNamespacedDeployment({ namespace: SYSTEM })).items.map((d) => d.metadata?.name).join(', ')}`,
    );
    await deploymentsReady('helm upgrade to two shards');
    await expectConverged(ns, 'helm upgrade to two shards', Date.now(), 120_000);
    stop = true;
    await watch;
    expect([...lost]).toEqual([]);
    // Each shard's Lease is held by a pod of that shard's Deployment (holderIdentity names the pod).
    const shardPods = async (s: number) =>
      (await controllerPods()).filter((p) => p.metadata.labels?.['claimkit.dev/shard'] === String(s));
    const holders: string[] = [];
    for (const s of [0, 1]) {
      expect((await shardPods(s)).map((p) => p.spec?.nodeName)).toEqual([node.name, node.name]);
      await until(
        `Lease ${SYSTEM}/claimkit-controller-shard-${s}-of-2 held by a pod of shard ${s}`,
        async () => {
          const lease = await unlessNotFound(
            coordination.readNamespacedLease({
              namespace: SYSTEM,
              name: `claimkit-controller-shard-${s}-of-2`,
            }),
          );
          const holder = lease?.spec?.holderIdentity ?? '';
          const pod = (await shardPods(s)).find((p) => holder.startsWith(p.metadata.name));
          if (pod) holders[s] = pod.metadata.name;
          return pod !== undefined;
        },
        60_000,
      );
    }
    // ClaimkitNoLeader's inputs: each shard's leader says claimkit_leader{shard} 1 and claimkit_shards 2.
    for (const s of [0, 1]) {
      const text = String(
        await e2eClients().core.connectGetNamespacedPodProxyWithPath({
          namespace: SYSTEM,
          name: `${holders[s]}:8080`,
          path: 'metrics',
        }),
      );
      expect(text, `metrics of ${holders[s]}`).toMatch(
        new RegExp(`^claimkit_leader\\{shard="${s}"\\} 1$`, 'm'),
      );
      expect(text, `metrics of ${holders[s]}`).toMatch(/^claimkit_shards 2$/m);
    }
    // Claims created now are bound by their pool's shard: the Bound Event's reportingInstance.
    for (const s of [0, 1]) {
      const name = `after-shards-${s}`;
      await claim(name, poolOfShard(s));
      await boundWithin(name, Date.now(), 60_000);
      const reporter = await until(`the Bound Event of PodClaim ${ns}/${name}`, async () =>
        (await boundEventReporters(ns)).get(name),
      );
      const shardOfReporter = [0, 1].find((x) => holders[x] && reporter.startsWith(holders[x]!));
      expect(
        shardOfReporter,
        `${name} (pool ${poolOfShard(s)}) bound by ${reporter}; leaders ${holders.join(', ')}`,
      ).toBe(s);
    }
  }, 360_000);

  it('helm uninstall leaves the CRDs and the user objects only', async () => {
    await run(['uninstall', RELEASE, '-n', SYSTEM, '--wait', '--timeout', '120s']);
    const { apps, core, apiextensions } = e2eClients();
    expect((await apps.listNamespacedDeployment({ namespace: SYSTEM })).items).toEqual([]);
    expect(
      (await core.listNamespacedService({ namespace: SYSTEM })).items.map((s) => s.metadata?.name),
    ).toEqual([]);
    const crds = (await apiextensions.listCustomResourceDefinition()).items.map((d) => d.metadata?.name);
    expect(crds).toEqual(
      expect.arrayContaining([
        'captures.claimkit.dev',
        'podpools.claimkit.dev',
        'podclaims.claimkit.dev',
        'podclaimsets.claimkit.dev',
      ]),
    );
    expect((await c().list('PodClaim', { namespace: ns })).items.length).toBeGreaterThan(0);
    // 'real' and the second shard's pool (shard-<i>).
    const pools = (await c().list('PodPool', { namespace: ns })).items.map((p) => p.metadata.name);
    expect(pools.sort()).toEqual(['real', expect.stringMatching(/^shard-\d+$/)]);
  }, 180_000);
});
