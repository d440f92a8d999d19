// Who may ask the capture agent for a checkpoint: a bearer token the API server vouches for
// (TokenReview, audience claimkit-capture-agent) whose user is allowed; /healthz stays open.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isApiError } from '@claimkit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpCaptureBackend } from '../backends/http.ts';
import { CaptureAgent } from './agent.ts';
import { bearerAuthenticator, type ReviewToken } from './auth.ts';

const CONTROLLER = 'system:serviceaccount:claimkit-system:claimkit-controller';
/** A stand-in API server: two known tokens, one of the controller, one of someone else. */
function reviews(): ReviewToken & { calls: string[] } {
  const calls: string[] = [];
  const review = async (token: string) => {
    calls.push(token);
    if (token === 'ctl-token') return { authenticated: true as const, user: CONTROLLER };
    if (token === 'other-token') return { authenticated: true as const, user: 'system:serviceaccount:x:y' };
    if (token === 'down') throw new Error('connect ECONNREFUSED 10.0.0.1:443');
    return {
      authenticated: false as const,
      error: 'token audiences ["https://kubernetes.default.svc"] is invalid',
    };
  };
  return Object.assign(review, { calls });
}

const agents: CaptureAgent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.close();
});

describe('capture agent authentication (--allowed-callers)', () => {
  it('judges the bearer token: none 401, not for this audience 401, another user 403, the controller ok; answers cached', async () => {
    let t = 0;
    const review = reviews();
    const auth = bearerAuthenticator({ allowed: [CONTROLLER], review, now: () => t });
    expect(await auth(undefined)).toMatchObject({
      ok: false,
      status: 401,
      error: expect.stringMatching(/bearer token is required/),
    });
    expect(await auth('Basic abc')).toMatchObject({ ok: false, status: 401 });
    expect(await auth('Bearer api-server-token')).toMatchObject({
      ok: false,
      status: 401,
      error: expect.stringMatching(/not valid for audience claimkit-capture-agent/),
    });
    expect(await auth('Bearer other-token')).toMatchObject({
      ok: false,
      status: 403,
      error: expect.stringMatching(/system:serviceaccount:x:y may not ask this agent/),
    });
    expect(await auth('Bearer ctl-token')).toEqual({ ok: true, user: CONTROLLER });
    expect(await auth('Bearer ctl-token')).toEqual({ ok: true, user: CONTROLLER });
    expect(review.calls.filter((c) => c === 'ctl-token')).toHaveLength(1);
    t += 61_000;
    await auth('Bearer ctl-token');
    expect(review.calls.filter((c) => c === 'ctl-token')).toHaveLength(2);
    // The API server unreachable: 503, and not remembered.
    expect(await auth('Bearer down')).toMatchObject({
      ok: false,
      status: 503,
      error: expect.stringMatching(/ECONNREFUSED/),
    });
    await auth('Bearer down');
    expect(review.calls.filter((c) => c === 'down')).toHaveLength(2);
  });

  it('an agent with an authenticator refuses unauthenticated starts and polls (nothing started) but keeps /healthz open; the controller’s backend sends its token file', async () => {
    const agent = new CaptureAgent({
      durationMs: 10,
      authenticate: bearerAuthenticator({ allowed: [CONTROLLER], review: reviews() }),
    });
    agents.push(agent);
    const { url, port } = await agent.listen(0, '127.0.0.1');
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const body = JSON.stringify({
      namespace: 'ns',
      pod: 'p',
      uid: 'u',
      container: 'main',
      node: 'n',
      capture: 'c',
      token: 1,
    });
    const anon = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(anon.status).toBe(401);
    expect((await fetch(`${url}/some-id`)).status).toBe(401);
    expect(agent.accepted.size).toBe(0);

    const dir = mkdtempSync(join(tmpdir(), 'claimkit-agent-auth-'));
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'other-token\n');
    const req = { namespace: 'ns', capture: 'c', pod: 'p', uid: 'u', container: 'main', node: 'n', token: 1 };
    const backend = new HttpCaptureBackend({ tokenFile });
    const refused = await backend.start(url, req).catch((e: unknown) => e);
    expect(isApiError(refused, 'Forbidden')).toBe(true);
    expect((refused as Error).message).toMatch(/HTTP 403: .*may not ask this agent/);
    // Re-read per request: the rotated token is the controller's.
    writeFileSync(tokenFile, 'ctl-token\n');
    const { id } = await backend.start(url, req);
    expect(agent.accepted.get('ns/c')).toEqual([1]);
    await expect.poll(async () => (await backend.poll(url, id, req)).state).toBe('Succeeded');
  });
});
