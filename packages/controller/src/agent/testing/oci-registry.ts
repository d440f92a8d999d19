// Test support (not built into dist/): an in-process OCI registry (the distribution spec's push and
// pull endpoints) that really stores what it is sent, in memory, per repository:
//   GET  /v2/                                   200
//   HEAD|GET /v2/<name>/blobs/<digest>          the blob, if linked to <name>; 404 BLOB_UNKNOWN
//   POST /v2/<name>/blobs/uploads/              202, Location /v2/<name>/blobs/uploads/<id>?_state=…
//   PUT  <Location>&digest=<digest>             201 when the bytes hash to <digest> and number
//                                               Content-Length; else 400 DIGEST_INVALID / SIZE_INVALID;
//                                               the upload's _state query must come back
//   PUT  /v2/<name>/manifests/<tag|digest>      201 when every blob it names is in <name> with that
//                                               size (else 400 MANIFEST_BLOB_UNKNOWN / MANIFEST_INVALID)
//   HEAD|GET /v2/<name>/manifests/<tag|digest>
// It can require Basic auth or the Bearer token flow (its own realm, GET /token, which checks Basic
// credentials when it has some and grants the scope asked), serve https with a given certificate,
// and answer a request with a fault instead (a status, a connection reset, or nothing).
import { createHash, randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TestCert } from './fake-kubelet.ts';

export interface RegistryRequest {
  method: string;
  /** Path and query. */
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  bytes: number;
}

export type RegistryFault =
  | { status: number; headers?: Record<string, string>; body?: string }
  | 'reset'
  | 'hang';

export interface StoredManifest {
  digest: string;
  mediaType: string;
  bytes: Buffer;
}

const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const NAME = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*';
const DIGEST = 'sha256:[0-9a-f]{64}';

export class TestRegistry {
  /** Every request, in order. */
  readonly requests: RegistryRequest[] = [];
  /** Content by digest (the store), and which digests each repository links. */
  readonly blobs = new Map<string, Buffer>();
  readonly links = new Map<string, Set<string>>();
  /** Manifests per repository, by tag and by digest. */
  readonly manifests = new Map<string, Map<string, StoredManifest>>();
  /** Basic credentials the registry (or, with bearer, its token realm) requires. */
  basic: { username: string; password: string } | undefined;
  /** Require Bearer tokens from the realm /token. */
  bearer = false;
  /** Tokens issued, with the scope each grants. */
  readonly tokens = new Map<string, string>();
  /** Upload Locations as absolute URLs (default: relative). */
  absoluteLocation = false;
  /** A fault for a request instead of its answer: consulted for each one, the first match used once. */
  readonly faults: { match: (method: string, url: string) => boolean; fault: RegistryFault }[] = [];
  /** Extra headers on manifest PUT answers (e.g. a wrong Docker-Content-Digest). */
  manifestPutHeaders: Record<string, string> = {};
  port = 0;
  private readonly uploads = new Map<string, { repo: string; state: string }>();
  private readonly server: ReturnType<typeof createHttpServer>;
  readonly scheme: 'http' | 'https';

  private constructor(cert: TestCert | undefined) {
    this.scheme = cert ? 'https' : 'http';
    const handler = (req: IncomingMessage, res: ServerResponse) => this.handle(req, res);
    this.server = cert
      ? createHttpsServer({ cert: cert.cert, key: cert.key }, handler)
      : createHttpServer(handler);
  }

  /** Listens on 127.0.0.1; https when given a certificate. */
  static async start(cert?: TestCert): Promise<TestRegistry> {
    const r = new TestRegistry(cert);
    await new Promise<void>((ok) => r.server.listen(0, '127.0.0.1', () => ok()));
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  /** host:port, as an image repository names it. */
  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Answers the next request matching `method` and a path containing `part` with `fault`, `times` times. */
  inject(method: string, part: string | RegExp, fault: RegistryFault, times = 1): void {
    for (let i = 0; i < times; i++)
      this.faults.push({
        match: (m, u) => m === method && (typeof part === 'string' ? u.includes(part) : part.test(u)),
        fault,
      });
  }

  /** `METHOD path` (no query) of every request, for counting. */
  seen(): string[] {
    return this.requests.map((r) => `${r.method} ${r.url.split('?')[0]}`);
  }

  manifest(repo: string, ref: string): StoredManifest | undefined {
    return this.manifests.get(repo)?.get(ref);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => {});
    const i = this.faults.findIndex((f) => f.match(method, url));
    const fault = i >= 0 ? this.faults.splice(i, 1)[0]!.fault : undefined;
    if (fault === 'reset') {
      this.record(req, method, url, 0);
      req.socket.destroy();
      return;
    }
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      this.record(req, method, url, body.length);
      if (fault === 'hang') return;
      if (fault) {
        res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
        return void res.end(fault.body ?? '');
      }
      this.route(req, res, method, url, body);
    });
  }

  private record(req: IncomingMessage, method: string, url: string, bytes: number): void {
    this.requests.push({
      method,
      url,
      authorization: req.headers.authorization,
      contentType: req.headers['content-type'],
      bytes,
    });
  }

  private route(req: IncomingMessage, res: ServerResponse, method: string, raw: string, body: Buffer) {
    const u = new URL(raw, 'http://registry');
    const path = u.pathname;
    const error = (status: number, code: string, message: string, headers: Record<string, string> = {}) => {
      const text = JSON.stringify({ errors: [{ code, message, detail: null }] });
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(method === 'HEAD' ? undefined : text);
    };
    if (path === '/token' && method === 'GET') return this.token(req, res, u);
    if (!path.startsWith('/v2/')) return error(404, 'NOT_FOUND', 'no such route');

    const upload = new RegExp(`^/v2/(${NAME})/blobs/uploads/([^/]*)$`).exec(path);
    const blob = new RegExp(`^/v2/(${NAME})/blobs/(${DIGEST})$`).exec(path);
    const manifest = new RegExp(`^/v2/(${NAME})/manifests/([^/]+)$`).exec(path);
    const repo = (upload ?? blob ?? manifest)?.[1];
    const push = method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';
    const denied = this.authorize(req, repo, push);
    if (denied) return error(401, 'UNAUTHORIZED', 'authentication required', { 'www-authenticate': denied });

    if (path === '/v2/' && method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{}');
    }
    if (upload && method === 'POST' && upload[2] === '') {
      const id = randomUUID();
      const state = randomUUID();
      this.uploads.set(id, { repo: upload[1]!, state });
      const location = `/v2/${upload[1]}/blobs/uploads/${id}?_state=${state}`;
      res.writeHead(202, {
        location: this.absoluteLocation ? `${this.scheme}://${this.host}${location}` : location,
        'docker-upload-uuid': id,
        range: '0-0',
        'content-length': '0',
      });
      return void res.end();
    }
    if (upload && method === 'PUT' && upload[2] !== '') {
      const up = this.uploads.get(upload[2]!);
      if (!up || up.repo !== upload[1])
        return error(404, 'BLOB_UPLOAD_UNKNOWN', 'blob upload unknown to registry');
      if (u.searchParams.get('_state') !== up.state)
        return error(400, 'BLOB_UPLOAD_INVALID', 'blob upload invalid: the upload state (query) is missing');
      const digest = u.searchParams.get('digest') ?? '';
      if (!new RegExp(`^${DIGEST}$`).test(digest))
        return error(400, 'DIGEST_INVALID', 'provided digest is not sha256');
      const length = Number(req.headers['content-length'] ?? Number.NaN);
      if (length !== body.length)
        return error(
          400,
          'SIZE_INVALID',
          `provided length did not match content length (${length} != ${body.length})`,
        );
      if (sha256(body) !== digest)
        return error(400, 'DIGEST_INVALID', 'provided digest did not match uploaded content');
      this.uploads.delete(upload[2]!);
      this.blobs.set(digest, body);
      this.link(upload[1]!).add(digest);
      res.writeHead(201, {
        location: `/v2/${upload[1]}/blobs/${digest}`,
        'docker-content-digest': digest,
        'content-length': '0',
      });
      return void res.end();
    }
    if (blob && (method === 'GET' || method === 'HEAD')) {
      const bytes = this.link(blob[1]!).has(blob[2]!) ? this.blobs.get(blob[2]!) : undefined;
      if (!bytes) return error(404, 'BLOB_UNKNOWN', 'blob unknown to registry');
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': String(bytes.length),
        'docker-content-digest': blob[2]!,
      });
      return void res.end(method === 'HEAD' ? undefined : bytes);
    }
    if (manifest && method === 'PUT')
      return this.putManifest(req, res, manifest[1]!, manifest[2]!, body, error);
    if (manifest && (method === 'GET' || method === 'HEAD')) {
      const m = this.manifest(manifest[1]!, manifest[2]!);
      if (!m) return error(404, 'MANIFEST_UNKNOWN', 'manifest unknown');
      res.writeHead(200, {
        'content-type': m.mediaType,
        'content-length': String(m.bytes.length),
        'docker-content-digest': m.digest,
      });
      return void res.end(method === 'HEAD' ? undefined : m.bytes);
    }
    return error(405, 'UNSUPPORTED', `${method} ${path} is not supported`);
  }

  private putManifest(
    req: IncomingMessage,
    res: ServerResponse,
    repo: string,
    ref: string,
    body: Buffer,
    error: (status: number, code: string, message: string) => void,
  ) {
    const mediaType = req.headers['content-type'] ?? '';
    let m: {
      schemaVersion?: unknown;
      mediaType?: unknown;
      config?: { digest?: unknown; size?: unknown };
      layers?: { digest?: unknown; size?: unknown }[];
    };
    try {
      m = JSON.parse(body.toString('utf8'));
    } catch {
      return error(400, 'MANIFEST_INVALID', 'manifest invalid: not JSON');
    }
    if (mediaType !== 'application/vnd.oci.image.manifest.v1+json' || m.mediaType !== mediaType)
      return error(400, 'MANIFEST_INVALID', `manifest invalid: unsupported media type ${mediaType}`);
    if (m.schemaVersion !== 2 || !m.config || !Array.isArray(m.layers))
      return error(400, 'MANIFEST_INVALID', 'manifest invalid: want schemaVersion 2, config, layers');
    for (const d of [m.config, ...m.layers]) {
      const have =
        typeof d.digest === 'string' && this.link(repo).has(d.digest) ? this.blobs.get(d.digest) : undefined;
      if (!have) return error(400, 'MANIFEST_BLOB_UNKNOWN', `blob unknown to registry: ${String(d.digest)}`);
      if (d.size !== have.length)
        return error(
          400,
          'MANIFEST_INVALID',
          `manifest invalid: size of ${String(d.digest)} is ${have.length}, not ${String(d.size)}`,
        );
    }
    const digest = sha256(body);
    if (ref.startsWith('sha256:') && ref !== digest)
      return error(400, 'DIGEST_INVALID', 'provided digest did not match uploaded content');
    const stored = { digest, mediaType, bytes: body };
    const byRef = this.manifests.get(repo) ?? new Map<string, StoredManifest>();
    this.manifests.set(repo, byRef);
    byRef.set(digest, stored);
    byRef.set(ref, stored);
    res.writeHead(201, {
      location: `/v2/${repo}/manifests/${digest}`,
      'docker-content-digest': digest,
      'content-length': '0',
      ...this.manifestPutHeaders,
    });
    res.end();
  }

  private link(repo: string): Set<string> {
    const s = this.links.get(repo) ?? new Set<string>();
    this.links.set(repo, s);
    return s;
  }

  private basicOk(header: string | undefined): boolean {
    if (!this.basic) return true;
    const want = Buffer.from(`${this.basic.username}:${this.basic.password}`).toString('base64');
    return header === `Basic ${want}`;
  }

  /** The challenge to answer with, or undefined when the request may pass. */
  private authorize(req: IncomingMessage, repo: string | undefined, push: boolean): string | undefined {
    const header = req.headers.authorization;
    if (this.bearer) {
      const want = repo ? `repository:${repo}:${push ? 'pull,push' : 'pull'}` : undefined;
      const granted = header?.startsWith('Bearer ') ? this.tokens.get(header.slice(7)) : undefined;
      const ok =
        granted !== undefined &&
        (!repo || (granted.startsWith(`repository:${repo}:`) && (!push || granted.endsWith('push'))));
      if (ok) return undefined;
      return `Bearer realm="${this.scheme}://${this.host}/token",service="test-registry"${want ? `,scope="${want}"` : ''}`;
    }
    if (this.basicOk(header)) return undefined;
    return 'Basic realm="test-registry"';
  }

  private token(req: IncomingMessage, res: ServerResponse, u: URL) {
    if (!this.basicOk(req.headers.authorization)) {
      res.writeHead(401, {
        'content-type': 'application/json',
        'www-authenticate': 'Basic realm="test-registry"',
      });
      return void res.end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'bad credentials' }] }));
    }
    if (u.searchParams.get('service') !== 'test-registry') {
      res.writeHead(400, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ errors: [{ code: 'UNSUPPORTED', message: 'unknown service' }] }));
    }
    const token = randomUUID();
    this.tokens.set(token, u.searchParams.get('scope') ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    // Docker Hub's realm answers both fields; a registry may give either.
    res.end(JSON.stringify({ access_token: token, expires_in: 300 }));
  }
}
