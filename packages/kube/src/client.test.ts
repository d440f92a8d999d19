// The adapter against a real local HTTP server answering like kube-apiserver: request shapes
// (paths, content types, preconditions) and the mapping of every failure to ApiError.
import { ApiError, type ConfigMap, type PodClaim } from '@claimkit/core';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKubeClient, type KubeClient, type RequestVerb } from './client.ts';
import { explainConnectionError } from './errors.ts';
import { type FakeApiServer, json, startFakeApiServer, status } from './fake-apiserver.test-helper.ts';
import { MAX_REQUEST_SOCKETS } from './node-http.ts';

const cm = (name: string, rv = '5'): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'ns', name, resourceVersion: rv, uid: 'u-1' },
  data: { a: 'b' },
});

async function failure(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('expected a failure');
}

// Both HTTP libraries the transport has: node:http (Node) and client-node's fetch (Deno, proxies).
describe.each(['node', 'fetch'] as const)('KubeClient over a local API server (%s)', (http) => {
  let srv: FakeApiServer;
  let client: KubeClient;
  let calls: [RequestVerb, string, number][];

  beforeEach(async () => {
    srv = await startFakeApiServer();
    calls = [];
    client = createKubeClient(srv.kubeConfig(), {
      http,
      timeoutMs: 500,
      onRequest: (verb, kind, code) => calls.push([verb, kind, code]),
    });
  });
  afterEach(async () => {
    await srv.close();
  });

  it('get, list (selectors, kind filled in), create with generateName', async () => {
    srv.on(
      (r) => r.method === 'GET' && r.path === '/api/v1/namespaces/ns/configmaps/a',
      (_r, res) => json(res, 200, cm('a')),
    );
    srv.on(
      (r) => r.method === 'GET' && r.path === '/apis/claimkit.dev/v1alpha1/namespaces/ns/podclaims',
      (_r, res) =>
        json(res, 200, {
          kind: 'PodClaimList',
          apiVersion: 'claimkit.dev/v1alpha1',
          metadata: { resourceVersion: '42' },
          items: [{ metadata: { name: 'c1', namespace: 'ns' }, spec: { poolName: 'web' } }],
        }),
    );
    srv.on(
      (r) => r.method === 'POST' && r.path === '/api/v1/namespaces/ns/configmaps',
      (r, res) => json(res, 201, { ...(r.body as object), metadata: { name: 'gen-abcde', namespace: 'ns' } }),
    );
    expect((await client.get('ConfigMap', { namespace: 'ns', name: 'a' })).data).toEqual({ a: 'b' });
    const l = await client.list('PodClaim', {
      namespace: 'ns',
      labelSelector: { matchLabels: { a: 'b' } },
      fieldSelector: { 'metadata.name': 'c1' },
    });
    expect(l.resourceVersion).toBe('42');
    expect(l.items[0]).toMatchObject({ kind: 'PodClaim', apiVersion: 'claimkit.dev/v1alpha1' });
    const listReq = srv.requests[1]!;
    expect(listReq.query.get('labelSelector')).toBe('a=b');
    expect(listReq.query.get('fieldSelector')).toBe('metadata.name=c1');
    expect(listReq.headers.authorization).toBe('Bearer t0ken');
    const created = await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: '', generateName: 'gen-', namespace: 'ns' },
    } as ConfigMap);
    expect(created.metadata.name).toBe('gen-abcde');
    expect(srv.requests[2]!.body).toMatchObject({ metadata: { generateName: 'gen-' } });
    expect(calls).toEqual([
      ['get', 'ConfigMap', 200],
      ['list', 'PodClaim', 200],
      ['create', 'ConfigMap', 201],
    ]);
  });

  it('merge patch carries resourceVersion and uid in metadata; status writes go to /status', async () => {
    srv.on(
      () => true,
      (_r, res) => json(res, 200, { kind: 'PodClaim', metadata: { name: 'c', namespace: 'ns' }, spec: {} }),
      true,
    );
    await client.patch(
      'ConfigMap',
      { namespace: 'ns', name: 'a' },
      { data: { x: null } },
      { resourceVersion: '7', uid: 'u-1' },
    );
    const p = srv.requests[0]!;
    expect(p.method).toBe('PATCH');
    expect(p.headers['content-type']).toBe('application/merge-patch+json');
    expect(p.body).toEqual({ data: { x: null }, metadata: { resourceVersion: '7', uid: 'u-1' } });
    await client.patchStatus('PodClaim', { namespace: 'ns', name: 'c' }, { status: { phase: 'Bound' } });
    expect(srv.requests[1]!.path).toBe('/apis/claimkit.dev/v1alpha1/namespaces/ns/podclaims/c/status');
    expect(srv.requests[1]!.body).toEqual({ status: { phase: 'Bound' } });
    const claim = {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name: 'c', namespace: 'ns', resourceVersion: '3' },
      spec: { poolName: 'web' },
    } as PodClaim;
    await client.updateStatus(claim);
    expect([srv.requests[2]!.method, srv.requests[2]!.path]).toEqual([
      'PUT',
      '/apis/claimkit.dev/v1alpha1/namespaces/ns/podclaims/c/status',
    ]);
    await client.update(claim);
    expect(srv.requests[3]!.path).toBe('/apis/claimkit.dev/v1alpha1/namespaces/ns/podclaims/c');
    // Kinds without a status subresource write the main resource.
    await client.patchStatus('ConfigMap', { namespace: 'ns', name: 'a' }, { data: {} });
    expect(srv.requests[4]!.path).toBe('/api/v1/namespaces/ns/configmaps/a');
    expect(calls.map((c) => c[0])).toEqual(['patch', 'patchStatus', 'updateStatus', 'update', 'patchStatus']);
  });

  it('a merge patch with another uid (422 on metadata.uid from the server) is a Conflict', async () => {
    srv.on(
      () => true,
      (_r, res) =>
        json(
          res,
          422,
          status(
            422,
            'Invalid',
            'ConfigMap "a" is invalid: metadata.uid: Invalid value: "x": field is immutable',
            {
              details: {
                causes: [
                  {
                    reason: 'FieldValueInvalid',
                    message: 'Invalid value: "x": field is immutable',
                    field: 'metadata.uid',
                  },
                ],
              },
            },
          ),
        ),
      true,
    );
    const k = { namespace: 'ns', name: 'a' };
    const e = await failure(client.patch('ConfigMap', k, { data: {} }, { uid: 'x' }));
    expect([e.reason, e.code]).toEqual(['Conflict', 409]);
    // Without a uid option the server's answer stands.
    expect((await failure(client.patch('ConfigMap', k, { metadata: { uid: 'x' } }))).reason).toBe('Invalid');
  });

  it('delete sends DeleteOptions; a Status answer is gone, a finalized object is kept', async () => {
    srv.on(
      (r) => r.method === 'DELETE',
      (_r, res) => json(res, 200, { kind: 'Status', apiVersion: 'v1', status: 'Success' }),
    );
    srv.on(
      (r) => r.method === 'DELETE',
      (_r, res) =>
        json(res, 200, {
          ...cm('b'),
          metadata: { ...cm('b').metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['x'] },
        }),
    );
    srv.on(
      (r) => r.method === 'DELETE',
      (_r, res) => json(res, 200, cm('c')),
    );
    const gone = await client.delete(
      'ConfigMap',
      { namespace: 'ns', name: 'a' },
      {
        preconditions: { resourceVersion: '5', uid: 'u-1' },
        gracePeriodSeconds: 0,
      },
    );
    expect(gone).toBeUndefined();
    expect(srv.requests[0]!.body).toEqual({
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions: { resourceVersion: '5', uid: 'u-1' },
      gracePeriodSeconds: 0,
    });
    const kept = await client.delete('ConfigMap', { namespace: 'ns', name: 'b' });
    expect(kept?.metadata.deletionTimestamp).toBeDefined();
    // The object returned after an immediate delete (no deletionTimestamp) is gone.
    expect(await client.delete('ConfigMap', { namespace: 'ns', name: 'c' })).toBeUndefined();
  });

  it('sends the bearer token; after a 401 the next request reads the credentials again (rotated token)', async () => {
    const ok = (_r: unknown, res: Parameters<typeof json>[0]) =>
      json(res, 200, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' } });
    srv.on(() => true, ok);
    srv.on(
      () => true,
      (_r, res) => json(res, 401, status(401, 'Unauthorized', 'Unauthorized')),
    );
    srv.on(() => true, ok);
    const kc = srv.kubeConfig();
    const c = createKubeClient(kc, { http });
    const key = { namespace: 'ns', name: 'a' };
    await c.get('ConfigMap', key);
    // The token file / exec plugin now yields another token; the old one is refused once.
    kc.loadFromOptions({
      clusters: kc.getClusters(),
      users: [{ name: 'u', token: 'rotated' }],
      contexts: kc.getContexts(),
      currentContext: kc.getCurrentContext(),
    });
    expect((await failure(c.get('ConfigMap', key))).code).toBe(401);
    await c.get('ConfigMap', key);
    expect(srv.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer t0ken',
      http === 'node' ? 'Bearer t0ken' : 'Bearer rotated',
      'Bearer rotated',
    ]);
  });

  it('impersonates (kubectl --as / --as-group) on every request when asked', async () => {
    srv.on(
      () => true,
      (_r, res) =>
        json(res, 200, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' } }),
      true,
    );
    await client.get('ConfigMap', { namespace: 'ns', name: 'a' });
    const as = createKubeClient(srv.kubeConfig(), {
      http,
      impersonate: { user: 'system:serviceaccount:x:y', group: 'g' },
    });
    await as.get('ConfigMap', { namespace: 'ns', name: 'a' });
    expect(srv.requests.map((r) => [r.headers['impersonate-user'], r.headers['impersonate-group']])).toEqual([
      [undefined, undefined],
      ['system:serviceaccount:x:y', 'g'],
    ]);
  });

  it('waits out a 429 (or a 5xx) with Retry-After and sends the request again, as client-go does', async () => {
    srv.on(
      () => true,
      (_r, res) =>
        json(res, 429, status(429, 'TooManyRequests', 'storage is (re)initializing'), { 'retry-after': '1' }),
    );
    srv.on(
      () => true,
      (_r, res) =>
        json(res, 503, status(503, 'ServiceUnavailable', 'apiserver is shutting down'), {
          'retry-after': '1',
        }),
    );
    srv.on(
      () => true,
      (_r, res) =>
        json(res, 200, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' } }),
    );
    const t0 = performance.now();
    const got = await createKubeClient(srv.kubeConfig(), {
      http,
      timeoutMs: 500,
    }).get('ConfigMap', {
      namespace: 'ns',
      name: 'a',
    });
    expect(got.metadata.name).toBe('a');
    expect(srv.requests.length).toBe(3);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1900);
  });

  it('gives up after retryThrottled attempts and reports TooManyRequests with Retry-After', async () => {
    srv.on(
      () => true,
      (_r, res) => json(res, 429, status(429, 'TooManyRequests', 'slow down'), { 'retry-after': '1' }),
      true,
    );
    const e = await failure(
      createKubeClient(srv.kubeConfig(), {
        http,
        timeoutMs: 500,
        retryThrottled: 1,
      }).get('ConfigMap', {
        namespace: 'ns',
        name: 'a',
      }),
    );
    expect([e.reason, e.retryAfterSeconds]).toEqual(['TooManyRequests', 1]);
    expect(srv.requests.length).toBe(2);
  });

  it('maps every HTTP failure to ApiError with reason, code, causes and Retry-After', async () => {
    // One answer per request: no retries here, so that each answer is mapped on its own.
    client = createKubeClient(srv.kubeConfig(), {
      http,
      timeoutMs: 500,
      retryThrottled: 0,
      onRequest: (verb, kind, code) => calls.push([verb, kind, code]),
    });
    const answers: [number, unknown, Record<string, string>?][] = [
      [409, status(409, 'AlreadyExists', 'configmaps "a" already exists')],
      [
        409,
        status(
          409,
          'Conflict',
          'Operation cannot be fulfilled on configmaps "a": the object has been modified',
        ),
      ],
      [404, status(404, 'NotFound', 'configmaps "a" not found')],
      [410, status(410, 'Expired', 'too old resource version: 1 (50)')],
      [
        422,
        status(422, 'Invalid', 'Capture.claimkit.dev "x" is invalid: ...', {
          details: {
            name: 'x',
            kind: 'Capture',
            causes: [
              {
                reason: 'FieldValueInvalid',
                message: 'Invalid value: -1: spec.leaseSeconds in body should be greater than or equal to 1',
                field: 'spec.leaseSeconds',
              },
              { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.selector' },
            ],
          },
        }),
      ],
      [403, status(403, 'Forbidden', 'podclaims is forbidden: User "u" cannot list')],
      [401, status(401, 'Unauthorized', 'Unauthorized')],
      [
        429,
        status(429, 'TooManyRequests', 'too many requests', { details: { retryAfterSeconds: 1 } }),
        { 'retry-after': '3' },
      ],
      [500, status(500, 'InternalError', 'etcd is sad')],
      [503, 'service unavailable (plain text from a proxy)'],
      [504, status(504, 'Timeout', 'the server was unable to return a response in the time allotted')],
      [400, status(400, 'BadRequest', 'the body of the request was in an unknown format')],
    ];
    for (const [code, body, headers] of answers) {
      srv.on(
        () => true,
        (_r, res) => {
          if (typeof body === 'string') {
            res.writeHead(code, { 'content-type': 'text/plain', ...headers });
            res.end(body);
          } else json(res, code, body, headers);
        },
      );
    }
    const k = { namespace: 'ns', name: 'a' };
    const got: [string, number, string][] = [];
    const errors: ApiError[] = [];
    for (let i = 0; i < answers.length; i++) {
      const e = await failure(client.get('ConfigMap', k));
      errors.push(e);
      got.push([e.reason, e.code, e.message.slice(0, 30)]);
    }
    expect(got.map((g) => `${g[0]} ${g[1]}`)).toEqual([
      'AlreadyExists 409',
      'Conflict 409',
      'NotFound 404',
      'Gone 410',
      'Invalid 422',
      'Forbidden 403',
      'Forbidden 401',
      'TooManyRequests 429',
      'Unavailable 500',
      'Unavailable 503',
      'Timeout 504',
      'BadRequest 400',
    ]);
    expect(errors[4]!.causes).toEqual([
      {
        field: 'spec.leaseSeconds',
        message: 'Invalid value: -1: spec.leaseSeconds in body should be greater than or equal to 1',
      },
      { field: 'spec.selector', message: 'Required value' },
    ]);
    expect(errors[7]!.retryAfterSeconds).toBe(3);
    expect(errors[7]!.transient).toBe(true);
    expect(errors[9]!.message).toContain('service unavailable');
    expect(errors[1]!.message).toContain('the object has been modified');
    expect(calls.map((c) => c[2])).toEqual(answers.map((a) => a[0]));
  });

  it('a server that does not answer: Timeout after the per-request timeout, naming the server', async () => {
    srv.on(
      () => true,
      () => {
        // never answer
      },
    );
    const t0 = Date.now();
    const e = await failure(client.get('ConfigMap', { namespace: 'ns', name: 'a' }));
    expect(e.reason).toBe('Timeout');
    expect(e.code).toBe(0);
    expect(e.message).toContain(srv.url);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(450);
    expect(calls).toEqual([['get', 'ConfigMap', 0]]);
  });

  it('a refused connection: Unavailable with a readable message', async () => {
    const url = srv.url;
    await srv.close();
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const c = createKubeClient(kc, { http });
    const e = await failure(c.list('Pod', { namespace: 'ns' }));
    expect(e.reason).toBe('Unavailable');
    expect(e.message).toContain(`cannot reach the API server at ${url}: connection refused`);
    expect(
      explainConnectionError(
        Object.assign(new TypeError('fetch failed'), { cause: { code: 'ENOTFOUND' } }),
        'https://x:6443',
      ),
    ).toBe(
      'cannot reach the API server at https://x:6443: host not found (is the cluster running, and is this the right kubeconfig/context?)',
    );
    srv = await startFakeApiServer(); // for afterEach
  });

  it('watch streams events, skips bookmarks to onBookmark, maps an ERROR event to Gone', async () => {
    srv.on(
      (r) => r.query.get('watch') === 'true',
      (_r, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`${JSON.stringify({ type: 'ADDED', object: cm('w', '11') })}\n`);
        res.write(
          `${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'ConfigMap', metadata: { resourceVersion: '12' } } })}\n`,
        );
        // a line split over two writes
        const line = JSON.stringify({ type: 'MODIFIED', object: cm('w', '13') });
        res.write(line.slice(0, 10));
        setTimeout(() => {
          res.write(`${line.slice(10)}\n`);
          res.write(
            `${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', 'too old resource version: 13 (99)') })}\n`,
          );
        }, 20);
      },
    );
    const seen: string[] = [];
    const closeErr = await new Promise<ApiError | undefined>((resolve) =>
      client.watch(
        'ConfigMap',
        { namespace: 'ns', resourceVersion: '10', allowWatchBookmarks: true, timeoutSeconds: 300 },
        {
          onEvent: (e) => seen.push(`${e.type} ${e.object.metadata.resourceVersion} ${e.object.kind}`),
          onBookmark: (rv) => seen.push(`BOOKMARK ${rv}`),
          onClose: resolve,
        },
      ),
    );
    expect(seen).toEqual(['ADDED 11 ConfigMap', 'BOOKMARK 12', 'MODIFIED 13 ConfigMap']);
    expect(closeErr?.reason).toBe('Gone');
    const q = srv.requests[0]!.query;
    expect([q.get('resourceVersion'), q.get('allowWatchBookmarks'), q.get('timeoutSeconds')]).toEqual([
      '10',
      'true',
      '300',
    ]);
    expect(calls).toEqual([['watch', 'ConfigMap', 200]]);
  });

  it('omitManagedFields: answers, lists and watch events come without metadata.managedFields', async () => {
    const managedFields = [{ manager: 'kubectl', fieldsV1: { 'f:data': { 'f:a': {} } } }];
    const managed = (name: string, rv: string): ConfigMap => ({
      ...cm(name, rv),
      metadata: { ...cm(name, rv).metadata, managedFields } as ConfigMap['metadata'],
    });
    srv.on(
      (r) => r.query.get('watch') === 'true',
      (_r, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const line = JSON.stringify({ type: 'MODIFIED', object: managed('w', '13') });
        res.write(line.slice(0, 40)); // a line split inside its managedFields
        setTimeout(() => res.end(`${line.slice(40)}\n`), 20);
      },
    );
    srv.on(
      (r) => r.method === 'GET' && r.path === '/api/v1/namespaces/ns/configmaps',
      (_r, res) => json(res, 200, { kind: 'ConfigMapList', metadata: {}, items: [managed('l', '3')] }),
    );
    srv.on(
      (r) => r.method === 'GET' || r.method === 'PATCH',
      (_r, res) => json(res, 200, managed('a', '5')),
      true,
    );
    const omitting = createKubeClient(srv.kubeConfig(), { http, timeoutMs: 500, omitManagedFields: true });
    const events: ConfigMap[] = [];
    await new Promise<unknown>((resolve) =>
      omitting.watch(
        'ConfigMap',
        { namespace: 'ns' },
        { onEvent: (e) => events.push(e.object), onClose: resolve },
      ),
    );
    const answers = [
      await omitting.get('ConfigMap', { namespace: 'ns', name: 'a' }),
      await omitting.patch('ConfigMap', { namespace: 'ns', name: 'a' }, { data: { a: 'c' } }),
      ...(await omitting.list('ConfigMap', { namespace: 'ns' })).items,
      ...events,
    ];
    expect(answers.map((o) => [o.metadata.name, o.metadata.resourceVersion])).toEqual([
      ['a', '5'],
      ['a', '5'],
      ['l', '3'],
      ['w', '13'],
    ]);
    for (const o of answers) {
      expect(o.metadata).not.toHaveProperty('managedFields');
      expect(o.data).toEqual({ a: 'b' });
    }
    // Without the option the objects come as the server sent them.
    const kept = await client.get('ConfigMap', { namespace: 'ns', name: 'a' });
    expect(kept.metadata).toHaveProperty('managedFields', managedFields);
  });

  it('watch: a non-200 answer closes with the mapped error; inactivity ends it normally', async () => {
    srv.on(
      () => true,
      (_r, res) => json(res, 403, status(403, 'Forbidden', 'watch is forbidden')),
    );
    srv.on(
      () => true,
      (_r, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('\n');
      },
    );
    const e1 = await new Promise<ApiError | undefined>((resolve) =>
      client.watch('Pod', {}, { onEvent: () => {}, onClose: resolve }),
    );
    expect(e1?.reason).toBe('Forbidden');
    const t0 = Date.now();
    const e2 = await new Promise<ApiError | undefined | 'none'>((resolve) =>
      client.watch('Pod', { inactivityMs: 200 }, { onEvent: () => {}, onClose: (e) => resolve(e ?? 'none') }),
    );
    expect(e2).toBe('none');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    expect(srv.requests.map((r) => r.query.get('allowWatchBookmarks'))).toEqual([null, null]);
  });

  it('watch: after stop() no handler is called, not even onClose', async () => {
    let sendLater: (() => void) | undefined;
    srv.on(
      (r) => r.query.get('watch') === 'true',
      (_r, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`${JSON.stringify({ type: 'ADDED', object: cm('w', '11') })}\n`);
        sendLater = () => res.end(`${JSON.stringify({ type: 'MODIFIED', object: cm('w', '12') })}\n`);
      },
    );
    const calls: string[] = [];
    let first: () => void = () => {};
    const firstEvent = new Promise<void>((r) => {
      first = r;
    });
    const stop = client.watch(
      'ConfigMap',
      { namespace: 'ns' },
      {
        onEvent: (e) => {
          calls.push(`${e.type} ${e.object.metadata.resourceVersion}`);
          first();
        },
        onClose: (err) => calls.push(`close ${err?.reason ?? 'normal'}`),
      },
    );
    await firstEvent;
    stop();
    sendLater?.();
    await new Promise((r) => setTimeout(r, 100));
    expect(calls).toEqual(['ADDED 11']);
  });
});

describe('KubeClient on the node HTTP library', () => {
  let srv: FakeApiServer;
  beforeEach(async () => {
    srv = await startFakeApiServer();
  });
  afterEach(async () => {
    await srv.close();
  });

  it('100 requests at once share at most MAX_REQUEST_SOCKETS connections, kept for the next ones; a watch has its own', async () => {
    srv.on(
      (r) => r.query.get('watch') === 'true',
      (_r, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('');
      },
    );
    srv.on(
      () => true,
      (_r, res) => {
        setTimeout(
          () =>
            json(res, 200, {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'a', namespace: 'ns' },
            }),
          5,
        );
      },
      true,
    );
    const client = createKubeClient(srv.kubeConfig(), { http: 'node', timeoutMs: 2000 });
    const stop = client.watch('ConfigMap', { namespace: 'ns' }, { onEvent: () => {} });
    const key = { namespace: 'ns', name: 'a' };
    await Promise.all(Array.from({ length: 100 }, () => client.get('ConfigMap', key)));
    await Promise.all(Array.from({ length: 10 }, () => client.get('ConfigMap', key)));
    stop();
    expect(srv.requests.length).toBe(111);
    // The watch's connection plus at most MAX_REQUEST_SOCKETS for the requests, reused after.
    expect(srv.connections()).toBeGreaterThan(1);
    expect(srv.connections()).toBeLessThanOrEqual(MAX_REQUEST_SOCKETS + 1);
  });
});
