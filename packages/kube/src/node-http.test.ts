// node:http backend: what a read response keeps once its body has been read.
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeApiServer, json, startFakeApiServer } from './fake-apiserver.test-helper.ts';
import { NodeHttpBackend } from './node-http.ts';

let srv: FakeApiServer | undefined;
let backend: NodeHttpBackend | undefined;
afterEach(async () => {
  backend?.close();
  await srv?.close();
  backend = undefined;
  srv = undefined;
});

describe('NodeHttpBackend responses', () => {
  it('a read response keeps no listener of the read (which would hold the body and its text), and a late error on it is not thrown', async () => {
    const list = { items: Array.from({ length: 5000 }, (_, i) => ({ name: `pod-${i}` })) };
    srv = await startFakeApiServer();
    srv.on(
      (r) => r.path === '/api/v1/pods',
      (_r, res) => json(res, 200, list),
    );
    backend = new NodeHttpBackend(srv.kubeConfig(), srv.url);
    const resp = await backend.send(
      { method: 'GET', pathAndQuery: '/api/v1/pods', headers: {} },
      { timeoutMs: 5000 },
    );
    const res = (resp as unknown as { res: IncomingMessage }).res;
    const events = ['data', 'end', 'close', 'error'] as const;
    const nodes = Object.fromEntries(events.map((e) => [e, res.listeners(e)]));
    expect(JSON.parse(await resp.text())).toEqual(list);
    // Node's own listeners stay; of the read's, only a handler for a late error.
    for (const e of events)
      expect(res.listeners(e), e).toEqual(e === 'error' ? [...nodes[e]!, expect.any(Function)] : nodes[e]);
    expect(res.listeners('error').at(-1)!.name).toBe('ignoreLateError');
    expect(() => res.emit('error', new Error('socket reset after the body'))).not.toThrow();
  });
});
