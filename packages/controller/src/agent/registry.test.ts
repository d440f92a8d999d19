// Pushing a checkpoint archive (a real tar) as a checkpoint OCI image to an in-process registry
// (testing/oci-registry.ts) that stores and verifies what it gets, then reading it back: the
// manifest, config and layer; blobs the repository has are not uploaded again; anonymous, Basic and
// Bearer auth; retries of 429/5xx/resets; definite 4xx with the registry's words; abort and timeout;
// TLS verified unless told not to.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHECKPOINT_ANNOTATIONS, checkpointImage, goArch, pushCheckpointImage } from './image.ts';
import { parseImageRef } from './ref.ts';
import {
  credentialsFor,
  OCI_MANIFEST,
  parseChallenge,
  RegistryClient,
  type RegistryOptions,
  registryErrorText,
} from './registry.ts';
import { makeTestCert, opensslAvailable, type TestCert } from './testing/fake-kubelet.ts';
import { TestRegistry } from './testing/oci-registry.ts';

const hex = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const CREATED = new Date('2026-05-01T10:00:00.000Z');
const REPO = 'claimkit/ns-cap';

/** A tar shaped like containerd's checkpoint archive. */
function checkpointTar(dir: string): string {
  const src = join(dir, 'src');
  mkdirSync(join(src, 'checkpoint'), { recursive: true });
  writeFileSync(join(src, 'checkpoint/pages-1.img'), Buffer.alloc(200_000, 0xab));
  writeFileSync(join(src, 'checkpoint/inventory.img'), 'criu inventory');
  writeFileSync(join(src, 'config.dump'), JSON.stringify({ id: 'c0ffee', name: 'main' }));
  writeFileSync(join(src, 'spec.dump'), JSON.stringify({ ociVersion: '1.2.0' }));
  writeFileSync(join(src, 'status.dump'), '{}');
  writeFileSync(join(src, 'container.log'), 'hello\n');
  const file = join(dir, 'checkpoint.tar');
  execFileSync('tar', [
    '-cf',
    file,
    '-C',
    src,
    'checkpoint',
    'config.dump',
    'spec.dump',
    'status.dump',
    'container.log',
  ]);
  return file;
}

const meta = (token: number, created = CREATED) => ({
  namespace: 'ns',
  pod: 'db-0',
  container: 'main',
  capture: 'cap',
  token,
  created,
  architecture: 'amd64',
});

describe('pushing a checkpoint image', () => {
  let dir: string;
  let archive: { file: string; sha256: string; size: number };
  let bytes: Buffer;
  let registry: TestRegistry;
  let logs: { msg: string }[];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'claimkit-agent-registry-'));
    const file = checkpointTar(dir);
    bytes = readFileSync(file);
    archive = { file, sha256: hex(bytes), size: statSync(file).size };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(async () => {
    registry = await TestRegistry.start();
    logs = [];
  });
  afterEach(() => registry.close());

  const opts = (over: RegistryOptions = {}): RegistryOptions => ({
    plainHTTP: true,
    timeoutMs: 5000,
    backoffMs: 10,
    log: (l) => logs.push(l),
    ...over,
  });
  const push = (
    over: RegistryOptions = {},
    token = 1,
    signal = new AbortController().signal,
    m = meta(token),
  ) => pushCheckpointImage({ host: registry.host, path: REPO }, archive, m, opts(over), signal);
  const get = async (path: string) => {
    const res = await fetch(`http://${registry.host}/v2/${REPO}/${path}`);
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      body: Buffer.from(await res.arrayBuffer()),
    };
  };
  const authFile = (config: unknown) => {
    const f = join(dir, `auth-${Math.random()}.json`);
    writeFileSync(f, JSON.stringify(config));
    return f;
  };
  const layerDigest = () => `sha256:${archive.sha256}`;

  it('pushes layer, config and manifest; the registry serves them back as a checkpoint image', async () => {
    const pushed = await push();
    const stored = registry.manifest(REPO, '1')!;
    expect(pushed).toEqual({
      repository: `${registry.host}/${REPO}`,
      tag: '1',
      digest: stored.digest,
      ref: `image:${registry.host}/${REPO}@${stored.digest}`,
      layerUploaded: true,
    });
    expect(parseImageRef(pushed.ref)).toEqual({
      repository: `${registry.host}/${REPO}`,
      sha256: stored.digest.slice(7),
    });
    // By the digest the ref names: the manifest's bytes hash to it.
    const m = await get(`manifests/${stored.digest}`);
    expect(m.status).toBe(200);
    expect(m.type).toBe(OCI_MANIFEST);
    expect(`sha256:${hex(m.body)}`).toBe(stored.digest);
    const manifest = JSON.parse(m.body.toString('utf8'));
    const annotations = {
      'org.criu.checkpoint.container.name': 'main',
      'io.kubernetes.cri-o.annotations.checkpoint.name': 'main',
      'org.criu.checkpoint.pod.name': 'db-0',
      'org.criu.checkpoint.pod.namespace': 'ns',
      'dev.claimkit.capture': 'ns/cap',
      'dev.claimkit.token': '1',
      'org.opencontainers.image.created': '2026-05-01T10:00:00.000Z',
    };
    expect(manifest).toEqual({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.oci.image.config.v1+json',
        digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        size: expect.any(Number),
      },
      layers: [
        { mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: layerDigest(), size: archive.size },
      ],
      annotations,
    });
    // The layer is the archive, byte for byte: still the tar containerd wrote.
    const layer = await get(`blobs/${layerDigest()}`);
    expect(layer.body.equals(bytes)).toBe(true);
    expect(execFileSync('tar', ['-tf', '-'], { input: layer.body, encoding: 'utf8' }).split('\n')).toEqual(
      expect.arrayContaining(['checkpoint/pages-1.img', 'config.dump', 'spec.dump', 'container.log']),
    );
    const config = await get(`blobs/${manifest.config.digest}`);
    expect(`sha256:${hex(config.body)}`).toBe(manifest.config.digest);
    expect(config.body.length).toBe(manifest.config.size);
    const c = JSON.parse(config.body.toString('utf8'));
    expect(Object.keys(c)).toEqual(['architecture', 'os', 'created', 'rootfs', 'config']);
    expect(c).toEqual({
      architecture: 'amd64',
      os: 'linux',
      created: '2026-05-01T10:00:00.000Z',
      rootfs: { type: 'layers', diff_ids: [layerDigest()] },
      config: { Labels: annotations },
    });
    // By tag too; and each blob was checked before its upload.
    expect((await get('manifests/1')).body.equals(m.body)).toBe(true);
    expect(registry.seen()).toEqual([
      `HEAD /v2/${REPO}/blobs/${layerDigest()}`,
      `POST /v2/${REPO}/blobs/uploads/`,
      expect.stringMatching(new RegExp(`^PUT /v2/${REPO}/blobs/uploads/[0-9a-f-]+$`)),
      `HEAD /v2/${REPO}/blobs/${manifest.config.digest}`,
      `POST /v2/${REPO}/blobs/uploads/`,
      expect.stringMatching(/^PUT .*\/blobs\/uploads\//),
      `PUT /v2/${REPO}/manifests/1`,
      `GET /v2/${REPO}/manifests/${stored.digest}`,
      `GET /v2/${REPO}/blobs/${layerDigest()}`,
      `GET /v2/${REPO}/blobs/${manifest.config.digest}`,
      `GET /v2/${REPO}/manifests/1`,
    ]);
    const upload = registry.requests[2]!;
    expect(upload.url).toMatch(/\?_state=[0-9a-f-]+&digest=sha256%3A[0-9a-f]{64}$/);
    expect(upload.contentType).toBe('application/octet-stream');
    expect(upload.bytes).toBe(archive.size);
    expect(registry.requests[6]!.contentType).toBe(OCI_MANIFEST);
  });

  it('builds the same bytes for the same input (fixed key order), and names this machine’s GOARCH', () => {
    const layer = { digest: layerDigest(), size: archive.size };
    const a = checkpointImage(layer, meta(3));
    expect(checkpointImage(layer, meta(3)).manifest.equals(a.manifest)).toBe(true);
    expect(a.digest).toBe(`sha256:${hex(a.manifest)}`);
    expect(Object.keys(a.annotations)).toEqual(Object.values(CHECKPOINT_ANNOTATIONS));
    expect(checkpointImage(layer, meta(4)).digest).not.toBe(a.digest);
    expect(goArch('x64')).toBe('amd64');
    expect(goArch('arm64')).toBe('arm64');
    expect(goArch('ia32')).toBe('386');
    const { architecture: _, ...noArch } = meta(3);
    const cfg = JSON.parse(checkpointImage(layer, noArch).config.bytes.toString('utf8'));
    expect(cfg.architecture).toBe(
      { x64: 'amd64', arm64: 'arm64' }[process.arch as string] ?? cfg.architecture,
    );
  });

  it('does not upload a blob the repository already has (HEAD 200), and a new token is its own tag', async () => {
    const first = await push({}, 1);
    const before = registry.requests.length;
    const second = await push({}, 2, undefined, meta(2, new Date('2026-05-01T11:00:00.000Z')));
    const again = registry.seen().slice(before);
    expect(second.layerUploaded).toBe(false);
    expect(again).toEqual([
      `HEAD /v2/${REPO}/blobs/${layerDigest()}`,
      expect.stringMatching(/^HEAD .*\/blobs\/sha256:/), // the new config (another created time)
      `POST /v2/${REPO}/blobs/uploads/`,
      expect.stringMatching(/^PUT .*\/blobs\/uploads\//),
      `PUT /v2/${REPO}/manifests/2`,
    ]);
    const uploadedBytes = registry.requests.filter((r) => r.method === 'PUT' && r.url.includes('/uploads/'));
    expect(uploadedBytes.filter((r) => r.bytes === archive.size)).toHaveLength(1);
    // Token 1's tag is untouched; pushing token 1 again replaces only its own tag.
    expect(registry.manifest(REPO, '1')!.digest).toBe(first.digest);
    expect(registry.manifest(REPO, '2')!.digest).toBe(second.digest);
    const third = await push({}, 1, undefined, meta(1, new Date('2026-05-01T12:00:00.000Z')));
    expect(registry.manifest(REPO, '1')!.digest).toBe(third.digest);
    expect(third.digest).not.toBe(first.digest);
    expect(registry.manifest(REPO, first.digest)).toBeDefined(); // still there by digest
  });

  it('follows an absolute upload Location, keeping its query', async () => {
    registry.absoluteLocation = true;
    expect((await push()).layerUploaded).toBe(true);
    expect(registry.manifest(REPO, '1')).toBeDefined();
  });

  it('Basic auth from a Docker config file (auth or username/password); anonymous and wrong ones are refused, saying so', async () => {
    registry.basic = { username: 'robot', password: 's3cret' };
    // The first request is a HEAD: no body, so the reason phrase.
    const base = `pushing layer ${layerDigest()} to ${registry.host}/${REPO}: 401 Unauthorized`;
    await expect(push()).rejects.toThrow(`${base} (anonymous: give --registry-auth-file)`);
    const none = authFile({ auths: { 'other.example.com': { auth: 'eDp5' } } });
    await expect(push({ authFile: none })).rejects.toThrow(
      `${base} (${none} has no credentials for ${registry.host})`,
    );
    const wrong = authFile({ auths: { [registry.host]: { username: 'robot', password: 'nope' } } });
    const before = registry.requests.length;
    await expect(push({ authFile: wrong })).rejects.toThrow(
      `${base} (the registry refused the credentials for ${registry.host} in ${wrong})`,
    );
    expect(registry.requests.length - before).toBe(2); // the 401 once, then the credentials once: definite
    const good = authFile({
      auths: { [registry.host]: { auth: Buffer.from('robot:s3cret').toString('base64') } },
    });
    expect((await push({ authFile: good })).tag).toBe('1');
    const withScheme = authFile({
      auths: { [`https://${registry.host}/v1/`]: { username: 'robot', password: 's3cret' } },
    });
    expect((await push({ authFile: withScheme }, 2)).tag).toBe('2');
    expect(registry.manifest(REPO, '2')).toBeDefined();
    // Once the registry asked, every request carries the credentials.
    const last = registry.requests.slice(-4);
    expect(
      last.every((r) => r.authorization === `Basic ${Buffer.from('robot:s3cret').toString('base64')}`),
    ).toBe(true);
    await expect(push({ authFile: join(dir, 'missing.json') })).rejects.toThrow(
      /^cannot read the registry auth file .*missing\.json: ENOENT/,
    );
  });

  it('the Bearer token flow: a 401 names the realm, the token (asked with Basic credentials, for pull,push) is reused', async () => {
    registry.bearer = true;
    registry.basic = { username: 'robot', password: 's3cret' };
    const good = authFile({
      auths: { [registry.host]: { auth: Buffer.from('robot:s3cret').toString('base64') } },
    });
    const pushed = await push({ authFile: good });
    expect(registry.manifest(REPO, '1')!.digest).toBe(pushed.digest);
    const tokenAsks = registry.requests.filter((r) => r.url.startsWith('/token'));
    expect(tokenAsks).toHaveLength(1);
    expect(new URL(tokenAsks[0]!.url, 'http://x').searchParams.get('scope')).toBe(
      `repository:${REPO}:pull,push`,
    );
    expect(tokenAsks[0]!.authorization).toMatch(/^Basic /);
    expect(registry.seen().filter((s) => !s.startsWith('GET /token'))).toHaveLength(8); // 7 + the first HEAD's 401
    expect(registry.requests.at(-1)!.authorization).toMatch(/^Bearer /);
    // Without credentials the realm refuses: the step and the realm's own words.
    await expect(push({}, 2)).rejects.toThrow(
      `pushing layer ${layerDigest()} to ${registry.host}/${REPO}: getting a token from http://${registry.host}/token: 401 UNAUTHORIZED: bad credentials (anonymous: give --registry-auth-file)`,
    );
  });

  it('an anonymous Bearer realm works too (no credentials at all)', async () => {
    registry.bearer = true;
    expect((await push()).tag).toBe('1');
    expect(registry.requests.filter((r) => r.url.startsWith('/token'))[0]!.authorization).toBeUndefined();
  });

  it('tries again after 503, 429 (honouring Retry-After) and a connection reset', async () => {
    registry.inject('POST', '/blobs/uploads/', {
      status: 503,
      body: '{"errors":[{"code":"UNAVAILABLE","message":"busy"}]}',
    });
    registry.inject('PUT', '/blobs/uploads/', 'reset');
    registry.inject('PUT', '/manifests/1', { status: 429, headers: { 'retry-after': '1' }, body: '' });
    const t0 = Date.now();
    const pushed = await push();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(registry.manifest(REPO, '1')!.digest).toBe(pushed.digest);
    expect(registry.seen().filter((s) => s.startsWith('POST'))).toHaveLength(4); // layer: 503, reset, ok; config
    expect(registry.seen().filter((s) => s.startsWith('PUT /v2/claimkit/ns-cap/manifests/'))).toHaveLength(2);
    expect(logs.map((l) => l.msg)).toEqual([
      'registry: trying again',
      'registry: trying again',
      'registry: trying again',
    ]);
    expect(registry.blobs.get(layerDigest())!.equals(bytes)).toBe(true);
  });

  it('gives up after its attempts, or when the next would be after the timeout', async () => {
    registry.inject('POST', '/blobs/uploads/', { status: 502, body: 'Bad Gateway' }, 10);
    await expect(push({ attempts: 3 })).rejects.toThrow(
      `pushing layer ${layerDigest()} to ${registry.host}/${REPO}: starting the upload: 502 Bad Gateway (3 attempts)`,
    );
    registry.faults.length = 0;
    registry.inject('HEAD', '/blobs/', { status: 429, headers: { 'retry-after': '60' } });
    await expect(push({ timeoutMs: 2000 })).rejects.toThrow(
      /: 429 Too Many Requests \(1 attempt; the next would be after the 2 s timeout\)$/,
    );
  });

  it('a definite 4xx fails at once with the registry’s error', async () => {
    registry.inject('PUT', '/blobs/uploads/', {
      status: 400,
      body: JSON.stringify({
        errors: [{ code: 'DIGEST_INVALID', message: 'provided digest did not match uploaded content' }],
      }),
    });
    await expect(push()).rejects.toThrow(
      `pushing layer ${layerDigest()} to ${registry.host}/${REPO}: 400 DIGEST_INVALID: provided digest did not match uploaded content`,
    );
    expect(registry.seen().filter((s) => s.startsWith('PUT'))).toHaveLength(1);
    // The registry's own check: bytes that do not hash to the digest claimed.
    const lie = { ...archive, sha256: 'ab'.repeat(32) };
    await expect(
      pushCheckpointImage(
        { host: registry.host, path: REPO },
        lie,
        meta(1),
        opts(),
        new AbortController().signal,
      ),
    ).rejects.toThrow(
      `pushing layer sha256:${'ab'.repeat(32)} to ${registry.host}/${REPO}: 400 DIGEST_INVALID: provided digest did not match uploaded content`,
    );
    registry.inject('PUT', '/manifests/', {
      status: 403,
      body: '{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}',
    });
    await expect(push()).rejects.toThrow(
      /^pushing manifest sha256:[0-9a-f]{64} to 127\.0\.0\.1:\d+\/claimkit\/ns-cap:1: 403 DENIED: requested access to the resource is denied$/,
    );
  });

  it('the registry refuses a manifest naming blobs it does not have (MANIFEST_BLOB_UNKNOWN)', async () => {
    const client = new RegistryClient({ host: registry.host, path: REPO }, opts());
    const image = checkpointImage({ digest: layerDigest(), size: archive.size }, meta(1));
    await expect(
      client.pushManifest('1', image.manifest, OCI_MANIFEST, new AbortController().signal),
    ).rejects.toThrow(
      `pushing manifest ${image.digest} to ${registry.host}/${REPO}:1: 400 MANIFEST_BLOB_UNKNOWN: blob unknown to registry: ${image.config.digest}`,
    );
    expect(registry.manifest(REPO, '1')).toBeUndefined();
  });

  it('checks the Docker-Content-Digest the registry answers', async () => {
    registry.manifestPutHeaders = { 'docker-content-digest': `sha256:${'cd'.repeat(32)}` };
    await expect(push()).rejects.toThrow(
      new RegExp(`: the registry stored it as sha256:${'cd'.repeat(32)}, not as the bytes sent$`),
    );
  });

  it('an abort stops a push mid-upload; no answer within the timeout fails it', async () => {
    registry.inject('PUT', '/blobs/uploads/', 'hang');
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    const t0 = Date.now();
    await expect(push({}, 1, abort.signal)).rejects.toThrow(
      `pushing layer ${layerDigest()} to ${registry.host}/${REPO}: aborted`,
    );
    expect(Date.now() - t0).toBeLessThan(2000);
    registry.inject('PUT', '/blobs/uploads/', 'hang');
    await expect(push({ timeoutMs: 300 })).rejects.toThrow(
      `pushing layer ${layerDigest()} to ${registry.host}/${REPO}: PUT ${registry.host}: no answer within 0.3 s (--kubelet-timeout)`,
    );
    expect(registry.manifest(REPO, '1')).toBeUndefined();
  });
});

describe.skipIf(!opensslAvailable())('pushing over https', () => {
  let cert: TestCert;
  let registry: TestRegistry;
  let dir: string;
  let archive: { file: string; sha256: string; size: number };
  beforeAll(async () => {
    cert = makeTestCert();
    registry = await TestRegistry.start(cert);
    dir = mkdtempSync(join(tmpdir(), 'claimkit-agent-registry-tls-'));
    const file = join(dir, 'a.tar');
    writeFileSync(file, 'not much of a tar');
    const b = readFileSync(file);
    archive = { file, sha256: hex(b), size: b.length };
  });
  afterAll(async () => {
    await registry.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(cert.certFile, '..'), { recursive: true, force: true });
  });
  const push = (o: RegistryOptions, token: number) =>
    pushCheckpointImage(
      { host: registry.host, path: REPO },
      archive,
      meta(token),
      { timeoutMs: 5000, ...o },
      new AbortController().signal,
    );

  it('verifies the certificate: refused without its CA (naming the flags), pushed with it or with verification off', async () => {
    await expect(push({}, 1)).rejects.toThrow(
      /^pushing layer sha256:[0-9a-f]{64} to 127\.0\.0\.1:\d+\/claimkit\/ns-cap: HEAD 127\.0\.0\.1:\d+: the registry's TLS certificate was not verified \(DEPTH_ZERO_SELF_SIGNED_CERT: self[- ]signed certificate\): give the CA that signed it \(--registry-ca FILE\) or turn verification off \(--registry-insecure-tls\)$/,
    );
    expect(registry.requests).toEqual([]);
    expect((await push({ caFile: cert.certFile }, 2)).tag).toBe('2');
    expect((await push({ insecureTLS: true }, 3)).tag).toBe('3');
    expect(registry.manifest(REPO, '2')).toBeDefined();
    expect(
      () => new RegistryClient({ host: registry.host, path: REPO }, { caFile: join(dir, 'nope.crt') }),
    ).toThrow(/^cannot read the registry CA file .*nope\.crt: ENOENT/);
  });
});

describe('registry helpers', () => {
  it('credentialsFor: keyed by host[:port], with or without scheme and path; docker.io as index.docker.io', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const config = {
      auths: {
        'reg.example.com:5000': { auth: b64('u1:p:1') },
        'https://ghcr.io': { username: 'u2', password: 'p2' },
        'https://index.docker.io/v1/': { auth: b64('u3:p3') },
        'broken.example.com': { auth: b64('nocolon') },
      },
    };
    expect(credentialsFor(config, 'reg.example.com:5000')).toEqual({ username: 'u1', password: 'p:1' });
    expect(credentialsFor(config, 'reg.example.com')).toBeUndefined();
    expect(credentialsFor(config, 'ghcr.io')).toEqual({ username: 'u2', password: 'p2' });
    expect(credentialsFor(config, 'docker.io')).toEqual({ username: 'u3', password: 'p3' });
    expect(credentialsFor({}, 'ghcr.io')).toBeUndefined();
    expect(() => credentialsFor(config, 'broken.example.com')).toThrow(/is not base64 of user:password/);
  });

  it('parseChallenge and registryErrorText', () => {
    expect(
      parseChallenge(
        'Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a/b:pull"',
      ),
    ).toEqual({
      scheme: 'bearer',
      params: {
        realm: 'https://auth.example.com/token',
        service: 'registry.example.com',
        scope: 'repository:a/b:pull',
      },
    });
    expect(parseChallenge('Basic realm="x"')).toEqual({ scheme: 'basic', params: { realm: 'x' } });
    expect(parseChallenge(undefined)).toEqual({ scheme: '', params: {} });
    expect(
      registryErrorText(
        Buffer.from(
          '{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known"},{"code":"DENIED","message":"no"}]}',
        ),
      ),
    ).toBe('NAME_UNKNOWN: repository name not known; DENIED: no');
    expect(registryErrorText(Buffer.from('<html>\n  Bad Gateway </html>'))).toBe(
      '<html> Bad Gateway </html>',
    );
  });
});
