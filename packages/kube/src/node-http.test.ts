// node:http backend: what a read response keeps once its body has been read.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from './kubeconfig.ts';
import { NodeHttpBackend } from './node-http.ts';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

async function backendFor(body: string): Promise<NodeHttpBackend> {
  const server = createServer((_, res) => res.end(body));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const backend = new NodeHttpBackend(kc, url);
  closers.push(() => {
    backend.close();
    server.close();
  });
  return backend;
}

describe('NodeHttpBackend responses', () => {
  it('a read response keeps no listener of the read (which would hold the body and its text), and a late error on it is not thrown', async () => {
    const big = JSON.stringify({ items: Array.from({ length: 5000 }, (_, i) => ({ name: `pod-${i}` })) });
    const backend = await backendFor(big);
    const resp = await backend.send(
      { method: 'GET', pathAndQuery: '/api/v1/pods', headers: {} },
      { timeoutMs: 5000 },
    );
    const res = (resp as unknown as { res: IncomingMessage }).res;
    const events = ['data', 'end', 'close', 'error'] as const;
    const nodes = Object.fromEntries(events.map((e) => [e, res.listeners(e)]));
    expect(await resp.text()).toBe(big);
    // Node's own listeners stay; of the read's, only a handler for a late error.
    for (const e of events)
      expect(res.listeners(e), e).toEqual(e === 'error' ? [...nodes[e]!, expect.any(Function)] : nodes[e]);
    expect(res.listeners('error').at(-1)!.name).toBe('ignoreLateError');
    expect(() => res.emit('error', new Error('socket reset after the body'))).not.toThrow();
  });
});
