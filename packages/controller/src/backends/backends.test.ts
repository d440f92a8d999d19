import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isApiError } from '@claimkit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { CaptureAgent } from '../agent/agent.ts';
import { HttpCaptureBackend } from './http.ts';
import { KubeletCaptureBackend } from './kubelet.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const req = (token: number, pod = 'db-0') => ({
  namespace: 'ns',
  capture: 'snap',
  pod,
  uid: `uid-${pod}`,
  container: 'main',
  node: 'node-1',
  token,
});

describe('Http backend against the reference agent', () => {
  it('starts, is idempotent per (capture, token), fences lower tokens, polls to Succeeded', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const agent = new CaptureAgent({
      capture: async (r) => {
        await gate;
        return `ref-${r.token}`;
      },
    });
    const { url } = await agent.listen(0, '127.0.0.1');
    closers.push(() => agent.close());
    const b = new HttpCaptureBackend({ timeoutMs: 2000 });
    const a = await b.start(url, req(3));
    expect((await b.start(url, req(3))).id).toBe(a.id);
    expect(await b.poll(url, a.id, req(3))).toEqual({ state: 'Running' });
    const err = await b.start(url, req(2, 'db-1')).catch((e) => e);
    expect(isApiError(err, 'Conflict')).toBe(true);
    const next = await b.start(url, req(4, 'db-1'));
    expect(await b.poll(url, a.id, req(3))).toMatchObject({ state: 'Failed' }); // superseded
    release();
    await new Promise((r) => setTimeout(r, 20));
    expect(await b.poll(url, next.id, req(4))).toEqual({ state: 'Succeeded', ref: 'ref-4' });
    expect(agent.accepted.get('ns/snap')).toEqual([3, 4]);
    expect(agent.tokenViolations()).toEqual([]);
  });

  it('expands {nodeName} and times out on a hung agent', async () => {
    const srv = createServer(() => {}); // never answers
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    closers.push(async () => {
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    });
    const port = (srv.address() as AddressInfo).port;
    const b = new HttpCaptureBackend({ timeoutMs: 100 });
    const e = await b.start(`http://127.0.0.1:${port}/{nodeName}`, req(1)).catch((x) => x);
    expect(isApiError(e, 'Timeout')).toBe(true);
    expect(e.message).toContain('/node-1');
  });

  it("expands {nodeIP} (the holder's host IP), and waits while the pod reports none", async () => {
    const seen: string[] = [];
    const srv = createServer((rq, rs) => {
      seen.push(`${rq.method} ${rq.url}`);
      rs.writeHead(201, { 'content-type': 'application/json' });
      rs.end(JSON.stringify({ id: 'j-1' }));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    closers.push(() => new Promise<void>((r) => srv.close(() => r())));
    const port = (srv.address() as AddressInfo).port;
    const b = new HttpCaptureBackend({ timeoutMs: 1000 });
    const url = `http://{nodeIP}:${port}/v1/captures`;
    expect(await b.start(url, { ...req(1), nodeIP: '127.0.0.1' })).toEqual({ id: 'j-1' });
    expect(seen).toEqual(['POST /v1/captures']);
    const e = await b.start(url, req(2)).catch((x) => x);
    expect(isApiError(e, 'Unavailable')).toBe(true);
    expect(e.transient).toBe(true);
    expect(e.message).toContain('reports no host IP yet');
    expect(seen).toHaveLength(1);
  });

  it('rejects garbage and unknown jobs', async () => {
    const agent = new CaptureAgent();
    const { url } = await agent.listen(0, '127.0.0.1');
    closers.push(() => agent.close());
    const bad = await fetch(url, { method: 'POST', body: '{"token":"x"}' });
    expect(bad.status).toBe(400);
    const b = new HttpCaptureBackend();
    const e = await b.poll(url, 'nope', req(1)).catch((x) => x);
    expect(isApiError(e, 'NotFound')).toBe(true);
  });
});

describe('Kubelet backend (ContainerCheckpoint)', () => {
  it('posts to the node proxy path and turns the archive into a ref', async () => {
    const paths: string[] = [];
    const b = new KubeletCaptureBackend({
      apiServer: async (_m, path) => {
        paths.push(path);
        return { status: 201, text: JSON.stringify({ items: ['/var/lib/kubelet/checkpoints/c.tar'] }) };
      },
    });
    const { id } = await b.start('', req(1));
    expect(paths).toEqual(['/api/v1/nodes/node-1/proxy/checkpoint/ns/db-0/main']);
    expect(await b.poll('', id)).toEqual({
      state: 'Succeeded',
      ref: 'checkpoint://node-1/var/lib/kubelet/checkpoints/c.tar',
    });
  });

  it('talks to a kubelet-shaped endpoint given as spec.backend.url', async () => {
    const seen: string[] = [];
    const srv = createServer((rq, rs) => {
      seen.push(`${rq.method} ${rq.url}`);
      rs.writeHead(200, { 'content-type': 'application/json' });
      rs.end(JSON.stringify({ items: ['/var/lib/kubelet/checkpoints/x.tar'] }));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    closers.push(() => new Promise<void>((r) => srv.close(() => r())));
    const port = (srv.address() as AddressInfo).port;
    const b = new KubeletCaptureBackend();
    const { id } = await b.start(`http://127.0.0.1:${port}`, req(1));
    expect(seen).toEqual(['POST /checkpoint/ns/db-0/main']);
    expect(id).toContain('x.tar');
  });

  it('reports a forbidden node proxy readably', async () => {
    const b = new KubeletCaptureBackend({ apiServer: async () => ({ status: 403, text: 'forbidden' }) });
    const e = await b.start('', req(1)).catch((x) => x);
    expect(isApiError(e, 'Forbidden')).toBe(true);
  });

  it('tells a definite refusal (an attempt spent) from one worth retrying', async () => {
    const answer = async (status: number, text: string) => {
      const b = new KubeletCaptureBackend({ apiServer: async () => ({ status, text }) });
      const e = await b.start('', req(1)).catch((x: unknown) => x);
      if (!isApiError(e)) throw new Error(`not an ApiError: ${String(e)}`);
      return { reason: e.reason, transient: e.transient, message: e.message };
    };
    // What a real kubelet 1.37 + containerd 2.4 answered (apps/e2e/src/node/capture-kubelet.test.ts).
    const criu = await answer(
      500,
      'checkpointing of default/counter/main failed (rpc error: code = Unknown desc = checkpointing container "dc1d" failed: /usr/sbin/runc did not terminate successfully: exit status 1: CRIU version check failed)',
    );
    expect(criu).toMatchObject({ reason: 'BadRequest', transient: false });
    expect(criu.message).toContain('CRIU version check failed');
    expect(await answer(404, 'container nope does not exist')).toMatchObject({
      reason: 'NotFound',
      transient: false,
    });
    const off = await answer(404, '404 page not found');
    expect(off.message).toContain('ContainerCheckpoint feature gate');
    const forbidden = await answer(403, 'forbidden: User "x" cannot create resource "nodes/proxy"');
    expect(forbidden).toMatchObject({ reason: 'Forbidden', transient: false });
    expect(forbidden.message).toContain('create on nodes/proxy');
    // The node proxy could not reach the kubelet (restarting), or an overloaded API server.
    expect(await answer(503, 'error trying to reach service: dial tcp: connection refused')).toMatchObject({
      reason: 'Unavailable',
      transient: true,
    });
    expect(await answer(500, 'Internal error occurred: something else')).toMatchObject({ transient: true });
    // Seen after a kubelet restart mid-checkpoint: the first checkpoint still holds the container paused.
    expect(
      await answer(
        500,
        'checkpointing of ns/kr-0/main failed (rpc error: code = Unknown desc = checkpointing container "1469" failed: cannot pause a paused container)',
      ),
    ).toMatchObject({ reason: 'Unavailable', transient: true });
    // Seen by a controller resuming a start while the killed one's checkpoint still held the task.
    expect(
      await answer(
        500,
        'checkpointing of ns/sk-0/main failed (rpc error: code = DeadlineExceeded desc = failed to get task for container "3930": context deadline exceeded)',
      ),
    ).toMatchObject({ reason: 'Unavailable', transient: true });
    expect(await answer(429, 'slow down')).toMatchObject({ reason: 'TooManyRequests', transient: true });
  });
});
