// The informer over the kube client against a local API-server-like HTTP server (the wire as the
// real server speaks it: 410 as an ERROR event, bookmarks, 503 answers): resume from the last
// resourceVersion after a watch ends, relist on 410 Gone (with add/update/delete diffs), the
// watchdog restarting a silent watch, backoff after failures, and stop(). The same loop over the
// in-memory ApiModel, with fake timers, is informer.test.ts.
import type { ConfigMap } from '@claimkit/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKubeClient } from './client.ts';
import { type FakeApiServer, json, startFakeApiServer, status } from './fake-apiserver.test-helper.ts';
import { Informer, InformerStartError } from './informer.ts';
import { InformerCache } from './informer-cache.ts';

const cm = (name: string, rv: string, v = rv): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'ns', name, resourceVersion: rv, uid: `uid-${name}` },
  data: { v },
});

const list = (rv: string, items: ConfigMap[]) => ({
  kind: 'ConfigMapList',
  apiVersion: 'v1',
  metadata: { resourceVersion: rv },
  items: items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest),
});

const isWatch = (r: { query: URLSearchParams }) => r.query.get('watch') === 'true';
const isList = (r: { method: string; query: URLSearchParams }) => r.method === 'GET' && !isWatch(r);

/** An InformerLog that keeps warnings and errors. */
function recordingLog() {
  const problems: string[] = [];
  const keep = (msg: string, f?: Record<string, unknown>) => problems.push(`${msg}: ${String(f?.error)}`);
  return { problems, log: { info: () => {}, warn: keep, error: keep } };
}

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('Informer over a local API server', () => {
  let srv: FakeApiServer;
  beforeEach(async () => {
    srv = await startFakeApiServer();
  });
  afterEach(async () => {
    await srv.close();
  });

  it('resumes from the last resourceVersion after a watch ends, relists on 410 with diffs', async () => {
    srv.on(isList, (_r, res) => json(res, 200, list('10', [cm('a', '9'), cm('gone', '8')])));
    // Watch 1: one event, then the server ends the watch (its timeout).
    srv.on(isWatch, (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'MODIFIED', object: cm('a', '11') })}\n`);
    });
    // Watch 2: a bookmark, then 410 as an ERROR event.
    srv.on(isWatch, (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(
        `${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'ConfigMap', metadata: { resourceVersion: '15' } } })}\n`,
      );
      res.end(
        `${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', 'too old resource version: 15 (20)') })}\n`,
      );
    });
    // Relist: a changed, gone removed, b added.
    srv.on(isList, (_r, res) => json(res, 200, list('30', [cm('a', '25'), cm('b', '26')])));
    // Watch 3: stays open until stop.
    srv.on(isWatch, (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('\n');
    });
    const client = createKubeClient(srv.kubeConfig());
    const seen: string[] = [];
    const { problems, log } = recordingLog();
    const inf = new Informer(client, 'ConfigMap', {
      namespace: 'ns',
      labelSelector: 'app=x',
      log,
      random: () => 0,
    });
    inf.addHandler({
      onAdd: (o) => seen.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`),
      onUpdate: (a, b) =>
        seen.push(`update ${b.metadata.name}@${a.metadata.resourceVersion}->${b.metadata.resourceVersion}`),
      onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
    });
    await inf.start();
    await until('the relist', () => inf.stats.lists === 2 && srv.requests.length === 5);
    inf.stop();
    expect(seen).toEqual([
      'add a@9',
      'add gone@8',
      'update a@9->11',
      'update a@11->25',
      'add b@26',
      'delete gone',
    ]);
    const reqs = srv.requests.map((r) =>
      isWatch(r) ? `watch rv=${r.query.get('resourceVersion')}` : 'list',
    );
    expect(reqs).toEqual(['list', 'watch rv=10', 'watch rv=11', 'list', 'watch rv=30']);
    expect(srv.requests.every((r) => r.query.get('labelSelector') === 'app=x')).toBe(true);
    expect(srv.requests.filter(isList).every((r) => r.query.get('limit') === '500')).toBe(true);
    expect(srv.requests.filter(isWatch).every((r) => r.query.get('allowWatchBookmarks') === 'true')).toBe(
      true,
    );
    expect(inf.stats).toMatchObject({ lists: 2, relists: 1, bookmarks: 1, failures: 0 });
    expect(problems).toEqual([]);
    expect(
      inf
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['a', 'b']);
  });

  it('the watchdog restarts a silent watch from the same resourceVersion; failures back off', async () => {
    srv.on(isList, (_r, res) => json(res, 200, list('10', [])));
    // Watch 1: silent (headers only).
    srv.on(isWatch, (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('\n');
    });
    // Watch 2: the server is down for a moment.
    srv.on(isWatch, (_r, res) => json(res, 503, status(503, 'ServiceUnavailable', 'etcd leader changed')));
    // Watch 3: delivers, then stays open.
    srv.on(isWatch, (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: cm('n', '12') })}\n`);
    });
    const client = createKubeClient(srv.kubeConfig());
    const { problems, log } = recordingLog();
    const inf = new Informer(client, 'ConfigMap', {
      watchdogMs: 300,
      backoffInitialMs: 100,
      log,
      random: () => 0,
    });
    const cache = new InformerCache(client);
    await expect(cache.list('Pod')).rejects.toThrow(/no informer for Pod/);
    await inf.start();
    await until('the event', () => inf.size === 1);
    inf.stop();
    const watches = srv.requests.filter(isWatch).map((r) => r.query.get('resourceVersion'));
    expect(watches).toEqual(['10', '10', '10']);
    expect(problems).toEqual(['watch failed; re-watching: etcd leader changed']);
    expect(inf.stats).toMatchObject({ failures: 1, watchdogRestarts: 1, lists: 1 });
  });

  it('a forbidden first list fails start() at once, naming the kind; with retryFirstList it is retried', async () => {
    srv.on(isList, (_r, res) => json(res, 403, status(403, 'Forbidden', 'configmaps is forbidden')), true);
    const client = createKubeClient(srv.kubeConfig());
    const failing = new Informer(client, 'ConfigMap', { random: () => 0 });
    const err = await failing.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InformerStartError);
    expect(err).toMatchObject({ kind: 'ConfigMap', cause: { reason: 'Forbidden' } });
    expect(srv.requests).toHaveLength(1);

    const inf = new Informer(client, 'ConfigMap', {
      backoffInitialMs: 50,
      backoffMaxMs: 100,
      retryFirstList: true,
      random: () => 0,
    });
    const started = inf.start();
    await expect(inf.waitForSync(AbortSignal.timeout(400))).rejects.toThrow();
    expect(inf.hasSynced()).toBe(false);
    expect(inf.stats.failures).toBeGreaterThanOrEqual(3);
    const pending = expect(inf.waitForSync()).rejects.toThrow(/stopped before sync/);
    inf.stop();
    await pending;
    await expect(started).rejects.toThrow(/stopped before sync/);
  });
});
