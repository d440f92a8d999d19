// The kubelet checkpoint capture against a real HTTPS kubelet double (testing/fake-kubelet.ts): the
// pod's UID checked on the node, the checkpoint, the archive mapped from the kubelet's path to the
// mount, stored per token and hashed, the ref; every way the kubelet can refuse or fail; the bearer
// token re-read; TLS verified unless told not to.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AgentLogLine, CaptureAgent } from './agent.ts';
import { archiveOnHost, type KubeletCaptureOptions, storeArchive, storedArchivePath } from './kubelet.ts';
import { parseCheckpointRef, parseImageRef } from './ref.ts';
import type { AgentJobRequest, AgentJobState } from './state.ts';
import {
  FAKE_KUBELET_ROOT,
  FakeKubelet,
  makeTestCert,
  opensslAvailable,
  type TestCert,
} from './testing/fake-kubelet.ts';
import { TestRegistry } from './testing/oci-registry.ts';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const UID = '1f0c2b9e-0000-4000-8000-000000000001';

const req = (token: number, over: Partial<AgentJobRequest> = {}): AgentJobRequest => ({
  namespace: 'team-a',
  pod: 'db-0',
  uid: UID,
  container: 'main',
  node: 'node-1',
  capture: 'db-snap',
  token,
  ...over,
});

async function settled(agent: CaptureAgent, id: string, timeoutMs = 10_000): Promise<AgentJobState> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = agent.job(id);
    if (s && s.state !== 'Running') return s;
    if (Date.now() > until) throw new Error(`job ${id} still ${s?.state} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.skipIf(!opensslAvailable())('kubelet checkpoint capture (HTTPS kubelet double)', () => {
  let cert: TestCert;
  let kubelet: FakeKubelet;
  let dir: string;
  let tokenFile: string;
  let storeDir: string;
  let logs: AgentLogLine[];
  const agents: CaptureAgent[] = [];

  beforeAll(() => {
    cert = makeTestCert();
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'claimkit-agent-kubelet-'));
    kubelet = await FakeKubelet.start(cert, join(dir, 'mnt/kubelet-checkpoints'));
    kubelet.pods = [
      { namespace: 'team-a', name: 'db-0', uid: UID, containers: ['main', 'sidecar'] },
      { namespace: 'team-a', name: 'web-0', uid: 'web-uid', containers: ['web'] },
    ];
    tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'tok-1\n');
    storeDir = join(dir, 'store');
    logs = [];
  });
  afterEach(async () => {
    for (const a of agents.splice(0)) await a.close();
    await kubelet.close();
    rmSync(dir, { recursive: true, force: true });
  });
  afterAll(() => rmSync(join(cert.certFile, '..'), { recursive: true, force: true }));

  const opts = (over: KubeletCaptureOptions = {}): KubeletCaptureOptions => ({
    host: '127.0.0.1',
    port: kubelet.port,
    tokenFile,
    caFile: cert.certFile,
    checkpointDir: kubelet.checkpointDir,
    storeDir,
    nodeName: 'node-1',
    ...over,
  });
  const newAgent = (over: KubeletCaptureOptions = {}, stateDir = join(dir, 'state')) => {
    const a = new CaptureAgent({ kubelet: opts(over), stateDir, log: (l) => logs.push(l) });
    agents.push(a);
    return a;
  };
  const run = async (a: CaptureAgent, r: AgentJobRequest) => settled(a, a.start(r).id);
  const paths = () => kubelet.seen.map((s) => `${s.method} ${s.path}`);

  it('checks the UID, checkpoints, stores the archive per token with its digest, and the ref parses back', async () => {
    const agent = newAgent();
    const st = await run(agent, req(3));
    expect(st.state, JSON.stringify(st)).toBe('Succeeded');
    expect(paths()).toEqual(['GET /pods', 'POST /checkpoint/team-a/db-0/main', 'GET /pods']);
    expect(kubelet.seen.every((s) => s.authorization === 'Bearer tok-1')).toBe(true);
    const stored = join(storeDir, 'team-a/db-snap/3.tar');
    const archive = kubelet.lastArchive()!;
    expect(readFileSync(stored)).toEqual(archive);
    const ref = (st as { ref: string }).ref;
    expect(ref).toBe(`checkpoint://node-1${stored}@sha256:${sha256(archive)}`);
    expect(parseCheckpointRef(ref)).toEqual({ node: 'node-1', path: stored, sha256: sha256(archive) });
    // Moved, not copied: the kubelet's directory does not fill up.
    expect(readdirSync(kubelet.checkpointDir)).toEqual([]);
    expect(logs.find((l) => l.msg === 'checkpoint stored')).toMatchObject({
      kubeletPath: expect.stringMatching(
        new RegExp(`^${FAKE_KUBELET_ROOT}/checkpoints/checkpoint-db-0_team-a-main-`),
      ),
      path: stored,
      sha256: sha256(archive),
    });
  });

  it("checkpoints the pod's first container when the request names none", async () => {
    const st = await run(newAgent(), req(1, { container: '' }));
    expect(st.state).toBe('Succeeded');
    expect(paths()).toContain('POST /checkpoint/team-a/db-0/main');
  });

  it('refuses a pod whose UID differs (a re-created pod of the same name): no checkpoint', async () => {
    const st = await run(newAgent(), req(1, { uid: 'old-uid' }));
    expect(st).toEqual({
      state: 'Failed',
      error: `pod team-a/db-0 on node node-1 has UID ${UID}, not old-uid: it is not the holder (a re-created pod of the same name); not checkpointed`,
    });
    expect(paths()).toEqual(['GET /pods']);
  });

  it('refuses a pod that is not on this node, and a request meant for another node', async () => {
    const agent = newAgent();
    expect(await run(agent, req(1, { pod: 'db-1' }))).toEqual({
      state: 'Failed',
      error: "pod team-a/db-1 is not on node node-1 (not in its kubelet's pod list)",
    });
    expect(await run(agent, req(2, { node: 'node-2' }))).toEqual({
      state: 'Failed',
      error: 'the request is for a pod on node node-2, but this agent runs on node node-1',
    });
    expect(await run(agent, req(3, { container: 'nope' }))).toMatchObject({
      state: 'Failed',
      error: 'pod team-a/db-0 has no container nope (it has main, sidecar)',
    });
    expect(await run(agent, req(4, { uid: '' }))).toMatchObject({
      state: 'Failed',
      error: expect.stringContaining('names no pod UID'),
    });
    expect(paths().filter((p) => p.startsWith('POST'))).toEqual([]);
  });

  it('asks again while an earlier checkpoint of the container still runs (the agent restarted mid-job), then stores the archive', async () => {
    const agent = newAgent({ busyRetryMs: 20 });
    let busy = 2;
    kubelet.respond = (m) =>
      m === 'POST' && busy-- > 0
        ? {
            status: 500,
            body: 'checkpointing of team-a/db-0/main failed (rpc error: code = Unknown desc = checkpointing container "1469" failed: cannot pause a paused container)',
          }
        : undefined;
    const done = await run(agent, req(1));
    expect(done.state).toBe('Succeeded');
    expect(busy).toBeLessThan(0);
  });

  it('fails the job with a readable error when the kubelet says 403, 500, garbage, or nothing', async () => {
    const base = `kubelet POST https://127.0.0.1:${kubelet.port}/checkpoint/team-a/db-0/main`;
    const agent = newAgent({ timeoutMs: 300 });
    const cases: [ReturnType<NonNullable<FakeKubelet['respond']>>, string][] = [
      [
        {
          status: 403,
          body: 'Forbidden (user=system:serviceaccount:claimkit-system:claimkit-capture-agent, verb=create, resource=nodes, subresource(s)=[proxy])',
        },
        `${base}: HTTP 403: Forbidden (user=system:serviceaccount:claimkit-system:claimkit-capture-agent, verb=create, resource=nodes, subresource(s)=[proxy]): the agent's identity needs create on nodes/checkpoint (or, on a kubelet without fine-grained authorization, on nodes/proxy; ClusterRole claimkit-capture-agent)`,
      ],
      [
        {
          status: 500,
          body: 'checkpointing of team-a/db-0/main failed (rpc error: code = Unimplemented desc = method CheckpointContainer not implemented)',
        },
        `${base}: HTTP 500: checkpointing of team-a/db-0/main failed (rpc error: code = Unimplemented desc = method CheckpointContainer not implemented)`,
      ],
      [{ status: 200, body: '<html>not json' }, `${base}: the answer is not JSON: "<html>not json"`],
      [
        { status: 200, body: '{"items":[]}' },
        `${base}: the answer names no archive (want {"items":["<path>"]})`,
      ],
      ['hang', `${base}: no answer within 0.3 s (--kubelet-timeout)`],
    ];
    let token = 0;
    for (const [answer, error] of cases) {
      kubelet.respond = (m) => (m === 'POST' ? answer : undefined);
      expect(await run(agent, req(++token)), error).toEqual({ state: 'Failed', error });
    }
    kubelet.respond = (m) => (m === 'GET' ? { status: 401, body: 'Unauthorized' } : undefined);
    expect(await run(agent, req(++token))).toEqual({
      state: 'Failed',
      error: `kubelet GET https://127.0.0.1:${kubelet.port}/pods: HTTP 401: Unauthorized: the kubelet did not accept the bearer token`,
    });
    kubelet.respond = (m) => (m === 'GET' ? { status: 200, body: '{"kind":"Status"}' } : undefined);
    expect(await run(agent, req(++token))).toEqual({
      state: 'Failed',
      error: `kubelet GET https://127.0.0.1:${kubelet.port}/pods: the answer is not a pod list (no items)`,
    });
    expect(existsSync(storeDir) ? readdirSync(storeDir) : []).toEqual([]);
  });

  it('re-reads the bearer token on every call (a projected token rotates)', async () => {
    const agent = newAgent();
    expect((await run(agent, req(1))).state).toBe('Succeeded');
    writeFileSync(tokenFile, 'tok-2\n');
    expect((await run(agent, req(2))).state).toBe('Succeeded');
    expect(kubelet.seen.map((s) => s.authorization)).toEqual([
      'Bearer tok-1',
      'Bearer tok-1',
      'Bearer tok-1',
      'Bearer tok-2',
      'Bearer tok-2',
      'Bearer tok-2',
    ]);
    rmSync(tokenFile);
    expect(await run(agent, req(3))).toMatchObject({
      state: 'Failed',
      error: expect.stringMatching(/: cannot read the bearer token .*token: ENOENT/),
    });
  });

  it('verifies TLS: a self-signed kubelet fails without a CA, works with its CA or --kubelet-insecure-tls', async () => {
    const noCa = newAgent({ caFile: undefined }, join(dir, 'state-a'));
    const st = await run(noCa, req(1));
    expect(st).toMatchObject({ state: 'Failed' });
    expect((st as { error: string }).error).toMatch(
      /^kubelet GET https:\/\/127\.0\.0\.1:\d+\/pods: the kubelet's TLS certificate was not verified \(DEPTH_ZERO_SELF_SIGNED_CERT: self[- ]signed certificate\): give the CA that signed it \(--kubelet-ca FILE\) or turn verification off \(--kubelet-insecure-tls\)$/,
    );
    expect(kubelet.seen).toEqual([]); // no request got through
    const otherCa = makeTestCert();
    const wrongCa = newAgent({ caFile: otherCa.certFile }, join(dir, 'state-b'));
    expect(await run(wrongCa, req(1))).toMatchObject({
      state: 'Failed',
      error: expect.stringContaining('--kubelet-ca FILE'),
    });
    rmSync(join(otherCa.certFile, '..'), { recursive: true, force: true });
    const insecure = newAgent({ caFile: undefined, insecureTLS: true }, join(dir, 'state-c'));
    expect((await run(insecure, req(1))).state).toBe('Succeeded');
    const withCa = newAgent({}, join(dir, 'state-d'));
    expect((await run(withCa, req(2))).state).toBe('Succeeded');
  });

  it('discards the archive when the pod was replaced while it was checkpointed', async () => {
    kubelet.afterCheckpoint = () => {
      kubelet.pods = kubelet.pods.map((p) => (p.name === 'db-0' ? { ...p, uid: 'new-uid' } : p));
    };
    const st = await run(newAgent(), req(1));
    expect(st).toEqual({
      state: 'Failed',
      error:
        "pod team-a/db-0 was replaced (UID new-uid) while it was checkpointed: the archive may not be the holder's; discarded",
    });
    expect(readdirSync(kubelet.checkpointDir)).toEqual([]);
    expect(existsSync(join(storeDir, 'team-a/db-snap/1.tar'))).toBe(false);
  });

  it('says so when the archive is not where --checkpoint-dir says', async () => {
    const st = await run(newAgent({ checkpointDir: join(dir, 'elsewhere') }), req(1));
    expect(st).toMatchObject({
      state: 'Failed',
      error: expect.stringMatching(
        /^the kubelet wrote \/var\/data\/kubelet\/checkpoints\/checkpoint-.*\.tar, but .*elsewhere\/checkpoint-.*\.tar cannot be read \(ENOENT.*\): is --checkpoint-dir the kubelet's checkpoint directory, mounted from the node\?$/,
      ),
    });
  });

  describe('with --image-repository: the archive pushed as a checkpoint image', () => {
    let registry: TestRegistry;
    beforeEach(async () => {
      registry = await TestRegistry.start(cert);
    });
    afterEach(() => registry.close());
    const image = () => ({ repository: `${registry.host}/claimkit`, caFile: cert.certFile, backoffMs: 10 });
    const REPO = 'claimkit/team-a-db-snap';

    it('pushes <repository>/<namespace>-<capture>:<token>; the ref is image:…@<the manifest the registry stored>', async () => {
      const st = await run(newAgent({ image: image() }), req(3));
      expect(st.state, JSON.stringify(st)).toBe('Succeeded');
      const stored = registry.manifest(REPO, '3')!;
      const ref = (st as { ref: string }).ref;
      expect(ref).toBe(`image:${registry.host}/${REPO}@${stored.digest}`);
      expect(parseImageRef(ref)).toEqual({
        repository: `${registry.host}/${REPO}`,
        sha256: stored.digest.slice(7),
      });
      const archive = kubelet.lastArchive()!;
      // The archive is kept as without a registry, and it is the image's one layer.
      expect(readFileSync(join(storeDir, 'team-a/db-snap/3.tar'))).toEqual(archive);
      const manifest = JSON.parse(stored.bytes.toString('utf8'));
      expect(manifest.layers).toEqual([
        {
          mediaType: 'application/vnd.oci.image.layer.v1.tar',
          digest: `sha256:${sha256(archive)}`,
          size: archive.length,
        },
      ]);
      expect(registry.blobs.get(`sha256:${sha256(archive)}`)).toEqual(archive);
      expect(manifest.annotations).toMatchObject({
        'org.criu.checkpoint.container.name': 'main',
        'io.kubernetes.cri-o.annotations.checkpoint.name': 'main',
        'org.criu.checkpoint.pod.name': 'db-0',
        'org.criu.checkpoint.pod.namespace': 'team-a',
        'dev.claimkit.capture': 'team-a/db-snap',
        'dev.claimkit.token': '3',
      });
      const config = JSON.parse(registry.blobs.get(manifest.config.digest)!.toString('utf8'));
      expect(config.rootfs).toEqual({ type: 'layers', diff_ids: [`sha256:${sha256(archive)}`] });
      expect(logs.find((l) => l.msg === 'checkpoint stored')).toMatchObject({
        path: join(storeDir, 'team-a/db-snap/3.tar'),
        sha256: sha256(archive),
        image: ref,
        tag: '3',
        layerBytes: archive.length,
        layerUploaded: true,
        pushMs: expect.any(Number),
      });
    });

    it("the container the pod's first one when the request names none; a later token is a new tag, the earlier one stays", async () => {
      const agent = newAgent({ image: image() });
      const one = await run(agent, req(1, { container: '' }));
      const two = await run(agent, req(2));
      expect([one.state, two.state]).toEqual(['Succeeded', 'Succeeded']);
      const m1 = registry.manifest(REPO, '1')!;
      expect(JSON.parse(m1.bytes.toString('utf8')).annotations['org.criu.checkpoint.container.name']).toBe(
        'main',
      );
      expect((one as { ref: string }).ref).toContain(m1.digest);
      expect((two as { ref: string }).ref).toContain(registry.manifest(REPO, '2')!.digest);
    });

    it('a push failure fails the job with the registry’s error; the archive stays stored', async () => {
      registry.inject('PUT', '/manifests/', {
        status: 403,
        body: '{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}',
      });
      const st = await run(newAgent({ image: image() }), req(1));
      expect(st).toEqual({
        state: 'Failed',
        error: expect.stringMatching(
          new RegExp(
            `^pushing manifest sha256:[0-9a-f]{64} to ${registry.host.replaceAll('.', '\\.')}/${REPO}:1: 403 DENIED: requested access to the resource is denied$`,
          ),
        ),
      });
      expect(existsSync(join(storeDir, 'team-a/db-snap/1.tar'))).toBe(true);
      expect(registry.manifest(REPO, '1')).toBeUndefined();
      // Not verified: the job fails naming the flags.
      const noCa = await run(
        newAgent({ image: { repository: `${registry.host}/claimkit` } }, join(dir, 'state-b')),
        req(2),
      );
      expect(noCa).toMatchObject({ state: 'Failed', error: expect.stringContaining('(--registry-ca FILE)') });
    });

    it('a job Running at a crash pushes again: the same token’s tag is replaced by the new checkpoint', async () => {
      const stateDir = join(dir, 'state');
      const first = await run(newAgent({ image: image() }, stateDir), req(5));
      const firstDigest = registry.manifest(REPO, '5')!.digest;
      expect((first as { ref: string }).ref).toContain(firstDigest);
      for (const a of agents.splice(0)) await a.close();
      // The saved state as a crash mid-push leaves it: token 5 still Running.
      const saved = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8'));
      saved.jobs[0].state = { state: 'Running' };
      delete saved.jobs[0].finishedAt;
      writeFileSync(join(stateDir, 'state.json'), JSON.stringify(saved));
      const again = newAgent({ image: image() }, stateDir);
      const st = await settled(again, saved.jobs[0].id);
      const second = registry.manifest(REPO, '5')!;
      expect(second.digest).not.toBe(firstDigest);
      expect(st).toEqual({ state: 'Succeeded', ref: `image:${registry.host}/${REPO}@${second.digest}` });
      expect(JSON.parse(second.bytes.toString('utf8')).layers[0].digest).toBe(
        `sha256:${sha256(kubelet.lastArchive()!)}`,
      );
    });
  });

  it('a job Running at a crash runs again after the restart: the second checkpoint replaces the archive of that token', async () => {
    // The state a crash leaves: the job saved as Running, and the archive of its first attempt
    // already stored (the agent died before it saved Succeeded).
    const stateDir = join(dir, 'state');
    mkdirSync(stateDir, { recursive: true });
    const r = req(5);
    writeFileSync(
      join(stateDir, 'state.json'),
      JSON.stringify({
        version: 1,
        highest: { 'team-a/db-snap': 5 },
        accepted: { 'team-a/db-snap': [5] },
        rejected: 0,
        jobs: [
          { id: 'job-5', req: r, state: { state: 'Running' }, startedAt: new Date().toISOString(), runs: 1 },
        ],
      }),
    );
    const stored = join(storeDir, 'team-a/db-snap/5.tar');
    mkdirSync(join(stored, '..'), { recursive: true });
    writeFileSync(stored, 'first attempt');
    const agent = newAgent({}, stateDir);
    const st = await settled(agent, 'job-5');
    expect(st.state).toBe('Succeeded');
    const archive = kubelet.lastArchive()!;
    expect(readFileSync(stored)).toEqual(archive);
    expect(parseCheckpointRef((st as { ref: string }).ref).sha256).toBe(sha256(archive));
    expect(logs.map((l) => l.msg)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^job was Running when the agent stopped: running its capture again/),
        'replaced the archive of an earlier attempt of the same token',
      ]),
    );
    // A repeated start is the same job, and the saved state says Succeeded.
    expect(agent.start(r)).toEqual({ id: 'job-5', created: false });
    const saved = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8'));
    expect(saved.jobs[0]).toMatchObject({ id: 'job-5', state: { state: 'Succeeded' }, runs: 2 });
  });
});

describe('archiveOnHost: the kubelet path mapped onto the mounted checkpoint directory', () => {
  it('keeps only the basename: the kubelet root on the node need not be the mount path', () => {
    expect(
      archiveOnHost(
        '/var/lib/kubelet/checkpoints/checkpoint-db-0_ns-main-2026.tar',
        '/var/lib/kubelet/checkpoints',
      ),
    ).toBe('/var/lib/kubelet/checkpoints/checkpoint-db-0_ns-main-2026.tar');
    expect(archiveOnHost('/var/data/kubelet/checkpoints/checkpoint-x.tar', '/host/checkpoints/')).toBe(
      '/host/checkpoints/checkpoint-x.tar',
    );
    expect(archiveOnHost('checkpoint-x.tar', '/host/checkpoints')).toBe('/host/checkpoints/checkpoint-x.tar');
    expect(archiveOnHost('/var/data/kubelet/checkpoints/../../../etc/shadow', '/m')).toBe('/m/shadow');
  });

  it('refuses a path without a file name', () => {
    for (const p of ['', '/', '/var/lib/kubelet/checkpoints/', '..', '/a/..'])
      expect(() => archiveOnHost(p, '/m'), p).toThrow(/the kubelet reported no archive file name/);
  });

  it('stores per namespace, capture and token, and refuses names that could leave the store', () => {
    expect(storedArchivePath('/s', { namespace: 'ns', capture: 'a.b', token: 7 })).toBe('/s/ns/a.b/7.tar');
    expect(() => storedArchivePath('/s', { namespace: '..', capture: 'c', token: 1 })).toThrow(
      /not a DNS label/,
    );
    expect(() => storedArchivePath('/s', { namespace: 'ns', capture: '../c', token: 1 })).toThrow(
      /not a DNS subdomain/,
    );
    expect(() => storedArchivePath('/s', { namespace: 'ns', capture: 'c', token: 0 })).toThrow(
      /not a positive integer/,
    );
  });
});

const shm = '/dev/shm';
const otherDevice = existsSync(shm) && statSync(shm).dev !== statSync(tmpdir()).dev;

describe('storeArchive', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'claimkit-agent-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('renames on one filesystem and hashes the bytes', async () => {
    const src = join(dir, 'a.tar');
    writeFileSync(src, 'bytes');
    const dest = join(dir, 'store/ns/c/1.tar');
    expect(await storeArchive(src, dest)).toEqual({ sha256: sha256(Buffer.from('bytes')), replaced: false });
    expect(existsSync(src)).toBe(false);
    writeFileSync(src, 'again');
    expect(await storeArchive(src, dest)).toEqual({ sha256: sha256(Buffer.from('again')), replaced: true });
    expect(readFileSync(dest, 'utf8')).toBe('again');
  });

  it.skipIf(!otherDevice)(
    'copies across filesystems (EXDEV), replaces atomically and removes the original',
    async () => {
      const srcDir = mkdtempSync(join(shm, 'claimkit-agent-'));
      try {
        const src = join(srcDir, 'a.tar');
        const bytes = Buffer.alloc(300_000, 7);
        writeFileSync(src, bytes);
        const dest = join(dir, 'ns/c/1.tar');
        mkdirSync(join(dest, '..'), { recursive: true });
        writeFileSync(dest, 'old');
        expect(await storeArchive(src, dest)).toEqual({ sha256: sha256(bytes), replaced: true });
        expect(readFileSync(dest)).toEqual(bytes);
        expect(existsSync(src)).toBe(false);
        expect(readdirSync(join(dest, '..'))).toEqual(['1.tar']); // no temporary file left
      } finally {
        rmSync(srcDir, { recursive: true, force: true });
      }
    },
  );
});
