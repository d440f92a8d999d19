// Each entry started for real over TLS: the Node entry (@hono/node-server + node:https) and the Deno
// entry (Deno.serve), answering an AdmissionReview and picking up a renewed certificate.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { CLAIMKIT_VERSION, LABEL_CLAIMED_BY } from '@claimkit/core';
import { claimedBy, podClaim, withState, withUid } from '@claimkit/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { poolPod, reviewFor } from './testing/review.ts';
import {
  type Cert,
  denoBinary,
  entryCommand,
  httpsRequest,
  makeCert,
  opensslAvailable,
  type Runtime,
  type Started,
  startEntry,
  WEBHOOK_DIR,
  writeCert,
} from './testing/serve-tls.ts';

const openssl = opensslAvailable();
const deno = denoBinary();

const running: Started[] = [];
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()));
});

async function waitFor<T>(fn: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`condition not met in ${ms} ms; last error: ${String(last)}`);
}

/** Sends one HTTP/1.1 keep-alive request on an open TLS socket and resolves with the response head. */
function rawRequest(socket: TLSSocket, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (chunk: Buffer) => {
      got += chunk.toString();
      // /healthz answers "ok" with a Content-Length, so the response is complete once "ok" arrived.
      if (got.includes('\r\n\r\n') && got.endsWith('ok')) done(undefined);
    };
    const onClose = () => done(new Error(`connection closed; got ${JSON.stringify(got)}`));
    const done = (err: Error | undefined) => {
      socket.off('data', onData);
      socket.off('close', onClose);
      if (err) reject(err);
      else resolve(got);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n`);
  });
}

/** Runs an entry to completion (it must exit on its own) and returns what a user sees. */
function runEntry(runtime: Runtime, args: string[]) {
  const { cmd, args: entry } = entryCommand(runtime, deno);
  const r = spawnSync(cmd, [...entry, ...args], {
    cwd: WEBHOOK_DIR,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
  });
  return { code: r.status, stdout: r.stdout, stderrLines: r.stderr.split('\n').filter((l) => l !== '') };
}

function commandLine(runtime: Runtime) {
  it('prints --help to stdout and exits 0', () => {
    const r = runEntry(runtime, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--tls-cert-file PATH');
    expect(r.stderrLines).toEqual([]);
  }, 60_000);

  it('answers a bad flag with one line on stderr and exit code 2', () => {
    const r = runEntry(runtime, ['--no-such-flag']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderrLines).toEqual(['claimkit-webhook: unknown flag --no-such-flag (see --help)']);
  }, 60_000);

  it('answers a missing certificate with one line naming the flag and the path, exit code 1', () => {
    const missing = join(WEBHOOK_DIR, 'no-such-dir', 'tls.crt');
    const r = runEntry(runtime, ['--tls-cert-file', missing, '--claim-index', 'off', '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.stderrLines).toHaveLength(1);
    expect(r.stderrLines[0]).toMatch(
      new RegExp(`^claimkit-webhook: cannot read the TLS certificate ${missing} \\(--tls-cert-file\\): `),
    );
  }, 60_000);
}

function suite(runtime: Runtime) {
  commandLine(runtime);

  let cert: Cert;
  let server: Started;

  it('starts over TLS and answers /healthz and an AdmissionReview', async () => {
    cert = makeCert();
    server = await startEntry(runtime, cert, [], deno);
    running.push(server);
    const health = await httpsRequest(server.port, '/healthz', { ca: cert.cert });
    expect(health).toMatchObject({ status: 200, body: 'ok' });

    const body = JSON.stringify(
      reviewFor({
        kind: 'Pod',
        uid: `rt-${runtime}`,
        oldObject: poolPod('p', claimedBy(podClaim('claim-a', withUid('ua')))),
        object: poolPod('p', claimedBy(podClaim('claim-b', withUid('ub')))),
      }),
    );
    const res = await httpsRequest(server.port, '/validate/pods', { ca: cert.cert, method: 'POST', body });
    expect(res.status).toBe(200);
    const review = JSON.parse(res.body);
    expect(review.response).toMatchObject({ uid: `rt-${runtime}`, allowed: false, status: { code: 403 } });
    expect(review.response.status.message).toContain(LABEL_CLAIMED_BY);

    const ok = await httpsRequest(server.port, '/validate/pods', {
      ca: cert.cert,
      method: 'POST',
      body: JSON.stringify(reviewFor({ kind: 'Pod', uid: 'ok', object: poolPod('p', withState('Idle')) })),
    });
    expect(JSON.parse(ok.body).response).toEqual({ uid: 'ok', allowed: true });
    const bad = await httpsRequest(server.port, '/validate/pods', {
      ca: cert.cert,
      method: 'POST',
      body: '{',
    });
    expect(bad.status).toBe(400);
    const metrics = await httpsRequest(server.port, '/metrics', { ca: cert.cert });
    expect(metrics.body).toContain(
      'claimkit_webhook_requests_total{path="/validate/pods",result="denied"} 1',
    );
    // process_* from the runtime's `process` (Node and Deno); the Node entry adds /proc and perf_hooks.
    expect(metrics.body).toMatch(/^process_resident_memory_bytes \d+$/m);
    if (runtime === 'node' && process.platform === 'linux')
      expect(metrics.body).toMatch(/^process_open_fds \d+$/m);
    // Which release and which runtime serve: Deno names itself, though it has a Node-compatible process.
    expect(metrics.body).toMatch(
      new RegExp(
        `^claimkit_build_info\\{component="webhook",runtime="${runtime} v?\\d+\\.\\d+\\.\\d+",version="${CLAIMKIT_VERSION.replace(/\./g, '\\.')}"\\} 1$`,
        'm',
      ),
    );
  }, 90_000);

  // The API server's webhook client reuses idle connections for up to 90 s; a server that closes
  // them sooner (Node's default is 5 s) races it into EOF errors and bursts of new TLS handshakes.
  it('keeps an idle keep-alive connection open past 5 s', async () => {
    const socket = connect({ host: '127.0.0.1', port: server.port, servername: 'localhost', ca: cert.cert });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('secureConnect', resolve);
        socket.once('error', reject);
      });
      expect(await rawRequest(socket, '/healthz')).toMatch(/^HTTP\/1\.1 200/);
      await new Promise((r) => setTimeout(r, 6500));
      expect(socket.destroyed).toBe(false);
      expect(await rawRequest(socket, '/healthz')).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      socket.destroy();
    }
  }, 30_000);

  it('reloads the certificate when its files change', async () => {
    const before = await httpsRequest(server.port, '/healthz', { ca: cert.cert });
    writeCert(cert.certFile, cert.keyFile, 'renewed.localhost');
    const renewed = readFileSync(cert.certFile);
    const after = await waitFor(async () => {
      const r = await httpsRequest(server.port, '/healthz', { ca: renewed });
      return r.status === 200 ? r : undefined;
    }, 30_000);
    expect(after.fingerprint).not.toBe(before.fingerprint);
    expect(server.lines.join('\n')).toContain('TLS certificate reloaded');
  }, 60_000);
}

describe.skipIf(!openssl)('Node entry (main-node.ts) over TLS', () => suite('node'));

describe.skipIf(!openssl || deno === undefined)(
  `Deno entry (main-deno.ts) over TLS${deno === undefined ? ' — skipped: the deno npm package did not install a working binary' : ''}`,
  () => suite('deno'),
);
