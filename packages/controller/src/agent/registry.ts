// Pushing blobs and manifests to an OCI registry (the distribution spec's push endpoints) over
// node:https / node:http, no client library:
//
//   HEAD /v2/<name>/blobs/<digest>               200: already there, not uploaded again
//   POST /v2/<name>/blobs/uploads/               202 + Location (relative or absolute, with a query)
//   PUT  <Location>&digest=<digest>              the whole blob, streamed; 201
//   PUT  /v2/<name>/manifests/<tag>              201 (+ Docker-Content-Digest, checked)
//
// Auth: anonymous; Basic with the registry's credentials from a Docker config file (`auths[host]`:
// `auth` = base64 user:pass, or username/password; re-read per client, a mounted Secret rotates);
// Bearer: a 401's `WWW-Authenticate: Bearer realm,service,scope` is answered by GET realm (with the
// Basic credentials if any) for a token, kept for the client's later requests. A request is sent
// again once after a 401; a second 401 is the answer. Credentials go to the registry's own origin
// (and its token realm) only, never to another host an upload Location may name.
//
// Retries: 429 (Retry-After honoured), 5xx and a broken connection are tried again with backoff, a
// few times, within the per-request timeout; any other 4xx is definite. Errors say which step failed
// and carry the registry's own error codes ({"errors":[{"code","message"}]}).
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { type ClientRequest, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import { urlToHttpOptions } from 'node:url';
import { formatImageRepository, type ImageRepository, parseImageRepository } from './ref.ts';

export const REGISTRY_TIMEOUT_MS = 120_000;
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';

type Log = (line: { level: 'debug' | 'info' | 'warn' | 'error'; msg: string; [k: string]: unknown }) => void;

export interface RegistryOptions {
  /** PEM CA bundle the registry's certificate is verified against (default: the system's CAs). */
  caFile?: string;
  /** Do not verify the registry's certificate. */
  insecureTLS?: boolean;
  /** http instead of https (tests, a local registry). */
  plainHTTP?: boolean;
  /** A Docker config file (`~/.docker/config.json`, a kubernetes.io/dockerconfigjson Secret's key). */
  authFile?: string;
  /** No answer (or no upload progress) for this long fails a request; retries stay within it (default 120 s). */
  timeoutMs?: number;
  /** The flag the timeout comes from, named in its error (default --kubelet-timeout). */
  timeoutFlag?: string;
  /** Attempts of a step after a retriable failure (default 4). */
  attempts?: number;
  /** The first backoff; doubled per retry (default 500 ms). */
  backoffMs?: number;
  log?: Log;
}

export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  /** 429, 5xx, a broken connection: worth another attempt. */
  readonly retriable: boolean;
  /** From a Retry-After header. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, o: { retriable?: boolean; retryAfterMs?: number | undefined } = {}) {
    super(message);
    this.retriable = o.retriable ?? false;
    this.retryAfterMs = o.retryAfterMs;
  }
}

/** A blob to push: its bytes in memory or a file, its digest (`sha256:<hex>`) and size. */
export interface Blob {
  digest: string;
  size: number;
  bytes?: Buffer;
  file?: string;
}

interface Res {
  status: number;
  /** The reason phrase (a HEAD's answer has no body to explain it). */
  statusText: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

type Body = { bytes: Buffer } | { file: string; size: number };

interface Credentials {
  username: string;
  password: string;
}

type Auth = { kind: 'none' } | { kind: 'basic' } | { kind: 'bearer'; token: string };

const NET_RETRY =
  /^(ECONNRESET|EPIPE|ECONNREFUSED|ECONNABORTED|ETIMEDOUT|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)$/;
const TLS_CODES =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_.*|ERR_TLS_CERT_ALTNAME_INVALID)$/;
const MAX_ANSWER = 4 * 1024 * 1024;

export const sha256Digest = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** Docker Hub's name and its API host differ; every other registry is its own API host. */
const apiHost = (host: string) => (host === 'docker.io' ? 'registry-1.docker.io' : host);

/**
 * The credentials for `host` in a Docker config file: `auths` keyed by host[:port], with or without
 * a scheme or path (`https://index.docker.io/v1/` for docker.io). Undefined: none for this host.
 */
export function credentialsFor(config: unknown, host: string): Credentials | undefined {
  const auths = (config as { auths?: unknown } | null)?.auths;
  if (!auths || typeof auths !== 'object') return undefined;
  const want = host === 'docker.io' || host === 'registry-1.docker.io' ? 'index.docker.io' : host;
  for (const [key, entry] of Object.entries(auths as Record<string, unknown>)) {
    const k = key.replace(/^[a-z]+:\/\//, '').replace(/\/.*$/, '');
    if (k !== want && !(want === 'index.docker.io' && k === 'docker.io')) continue;
    const e = (entry ?? {}) as { auth?: unknown; username?: unknown; password?: unknown };
    if (typeof e.auth === 'string' && e.auth !== '') {
      const plain = Buffer.from(e.auth, 'base64').toString('utf8');
      const colon = plain.indexOf(':');
      if (colon < 0) throw new Error(`auths[${JSON.stringify(key)}].auth is not base64 of user:password`);
      return { username: plain.slice(0, colon), password: plain.slice(colon + 1) };
    }
    if (typeof e.username === 'string' && typeof e.password === 'string')
      return { username: e.username, password: e.password };
  }
  return undefined;
}

/** `Bearer realm="…",service="…",scope="…"` (or `Basic realm="…"`): its scheme and parameters. */
export function parseChallenge(header: string | undefined): {
  scheme: string;
  params: Record<string, string>;
} {
  const m = /^\s*(\S+)\s*(.*)$/s.exec(header ?? '');
  const params: Record<string, string> = {};
  if (!m) return { scheme: '', params };
  for (const p of m[2]!.matchAll(/([A-Za-z_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g))
    params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : (p[3] ?? '');
  return { scheme: m[1]!.toLowerCase(), params };
}

/** The registry's errors (`{"errors":[{"code","message","detail"}]}`) as one line, else the body's text. */
export function registryErrorText(body: Buffer): string {
  const text = body.toString('utf8').trim();
  try {
    const errors = (JSON.parse(text) as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0)
      return errors
        .map((e: { code?: unknown; message?: unknown }) =>
          [e.code, e.message].filter((x) => typeof x === 'string' && x !== '').join(': '),
        )
        .join('; ');
  } catch {}
  return text.replace(/\s+/g, ' ').slice(0, 300);
}

function retryAfter(v: string | string[] | undefined): number | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return undefined;
  if (/^\d+$/.test(s.trim())) return Number(s) * 1000;
  const at = Date.parse(s);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

const sleep = (ms: number, signal: AbortSignal, what: string) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new RegistryError(`${what}: aborted`));
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new RegistryError(`${what}: aborted`));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** One repository of one registry; keeps the auth it learned for its later requests. */
export class RegistryClient {
  readonly repository: ImageRepository;
  /** `host[:port]/path`, as errors and refs name it. */
  readonly name: string;
  private readonly o: RegistryOptions;
  private readonly origin: string;
  private readonly timeoutMs: number;
  private readonly ca: Buffer | undefined;
  private readonly creds: Credentials | undefined;
  private auth: Auth = { kind: 'none' };

  /** Reads the CA and auth files now (a client is made per push): throws a readable RegistryError. */
  constructor(repository: ImageRepository | string, o: RegistryOptions = {}) {
    this.repository = typeof repository === 'string' ? parseImageRepository(repository) : repository;
    this.name = formatImageRepository(this.repository);
    if (!this.repository.path) throw new RegistryError(`image repository ${this.name} has no path`);
    this.o = o;
    this.origin = `${o.plainHTTP ? 'http' : 'https'}://${apiHost(this.repository.host)}`;
    this.timeoutMs = o.timeoutMs ?? REGISTRY_TIMEOUT_MS;
    try {
      this.ca = o.caFile ? readFileSync(o.caFile) : undefined;
    } catch (e) {
      throw new RegistryError(`cannot read the registry CA file ${o.caFile}: ${(e as Error).message}`);
    }
    if (o.authFile) {
      let config: unknown;
      try {
        config = JSON.parse(readFileSync(o.authFile, 'utf8'));
      } catch (e) {
        throw new RegistryError(`cannot read the registry auth file ${o.authFile}: ${(e as Error).message}`);
      }
      try {
        this.creds = credentialsFor(config, this.repository.host);
      } catch (e) {
        throw new RegistryError(`registry auth file ${o.authFile}: ${(e as Error).message}`);
      }
    }
  }

  private url(path: string): URL {
    return new URL(`/v2/${this.repository.path}${path}`, this.origin);
  }

  /** True when the registry has the blob in this repository. */
  async hasBlob(digest: string, what: string, signal: AbortSignal): Promise<boolean> {
    return this.retrying(what, signal, async () => {
      const res = await this.send(what, 'HEAD', this.url(`/blobs/${digest}`), {}, undefined, signal);
      if (res.status === 404) return false;
      if (res.status >= 200 && res.status < 400) return true;
      throw this.failure(what, res);
    });
  }

  /** Uploads a blob unless the repository has it; resolves to whether it was uploaded. */
  async pushBlob(blob: Blob, kind: string, signal: AbortSignal): Promise<boolean> {
    const what = `pushing ${kind} ${blob.digest} to ${this.name}`;
    if (await this.hasBlob(blob.digest, what, signal)) return false;
    const body: Body = blob.bytes ? { bytes: blob.bytes } : { file: blob.file!, size: blob.size };
    await this.retrying(what, signal, async () => {
      // A retry starts a new upload session: a failed PUT may have consumed the old one.
      const uploads = this.url('/blobs/uploads/');
      const start = await this.send(what, 'POST', uploads, {}, undefined, signal);
      if (start.status !== 202) throw this.failure(what, start, 'starting the upload');
      const location = start.headers.location;
      if (!location) throw new RegistryError(`${what}: the registry answered 202 without a Location`);
      const put = new URL(location, uploads);
      put.searchParams.append('digest', blob.digest);
      const res = await this.send(
        what,
        'PUT',
        put,
        { 'content-type': 'application/octet-stream', 'content-length': String(blob.size) },
        body,
        signal,
      );
      if (res.status < 200 || res.status >= 300) throw this.failure(what, res);
    });
    return true;
  }

  /** Puts a manifest under `tag`; resolves to its digest (checked against Docker-Content-Digest). */
  async pushManifest(tag: string, bytes: Buffer, mediaType: string, signal: AbortSignal): Promise<string> {
    const digest = sha256Digest(bytes);
    const what = `pushing manifest ${digest} to ${this.name}:${tag}`;
    await this.retrying(what, signal, async () => {
      const res = await this.send(
        what,
        'PUT',
        this.url(`/manifests/${tag}`),
        { 'content-type': mediaType, 'content-length': String(bytes.length) },
        { bytes },
        signal,
      );
      if (res.status < 200 || res.status >= 300) throw this.failure(what, res);
      const stored = res.headers['docker-content-digest'];
      if (typeof stored === 'string' && stored !== '' && stored !== digest)
        throw new RegistryError(`${what}: the registry stored it as ${stored}, not as the bytes sent`);
    });
    return digest;
  }

  private failure(what: string, res: Res, step?: string): RegistryError {
    const text = registryErrorText(res.body) || res.statusText;
    const hint =
      res.status === 401
        ? this.creds
          ? ` (the registry refused the credentials for ${this.repository.host} in ${this.o.authFile})`
          : this.o.authFile
            ? ` (${this.o.authFile} has no credentials for ${this.repository.host})`
            : ' (anonymous: give --registry-auth-file)'
        : '';
    return new RegistryError(
      `${what}: ${step ? `${step}: ` : ''}${res.status}${text ? ` ${text}` : ''}${hint}`,
      {
        retriable: res.status === 429 || res.status >= 500,
        retryAfterMs: retryAfter(res.headers['retry-after']),
      },
    );
  }

  /** `fn` again after a retriable failure, with backoff (or Retry-After), within the timeout. */
  private async retrying<T>(what: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    const started = Date.now();
    const attempts = this.o.attempts ?? 4;
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (!(e instanceof RegistryError) || !e.retriable || signal.aborted) throw e;
        const wait = e.retryAfterMs ?? (this.o.backoffMs ?? 500) * 2 ** (attempt - 1);
        const late = Date.now() - started + wait > this.timeoutMs;
        if (attempt >= attempts || late)
          throw new RegistryError(
            `${e.message} (${attempt} attempt${attempt > 1 ? 's' : ''}${late && attempt < attempts ? `; the next would be after the ${this.timeoutMs / 1000} s timeout` : ''})`,
          );
        this.o.log?.({
          level: 'warn',
          msg: 'registry: trying again',
          error: e.message,
          attempt,
          waitMs: wait,
        });
        await sleep(wait, signal, what);
      }
    }
  }

  private authorization(url: URL): Record<string, string> {
    if (url.origin !== this.origin) return {};
    if (this.auth.kind === 'bearer') return { authorization: `Bearer ${this.auth.token}` };
    if (this.auth.kind === 'basic' && this.creds) return { authorization: basic(this.creds) };
    return {};
  }

  /** One request with the auth learned so far; after a 401 the auth it asks for, and once more. */
  private async send(
    what: string,
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: Body | undefined,
    signal: AbortSignal,
  ): Promise<Res> {
    const res = await this.exchange(
      what,
      method,
      url,
      { ...headers, ...this.authorization(url) },
      body,
      signal,
    );
    if (res.status !== 401 || url.origin !== this.origin) return res;
    if (!(await this.authenticate(what, res, signal))) return res;
    return this.exchange(what, method, url, { ...headers, ...this.authorization(url) }, body, signal);
  }

  /** Learns the auth a 401 asks for: false when there is nothing new to try. */
  private async authenticate(what: string, res: Res, signal: AbortSignal): Promise<boolean> {
    const { scheme, params } = parseChallenge(res.headers['www-authenticate']);
    if (scheme === 'basic') {
      if (!this.creds || this.auth.kind === 'basic') return false;
      this.auth = { kind: 'basic' };
      return true;
    }
    if (scheme !== 'bearer' || !params.realm) return false;
    let realm: URL;
    try {
      realm = new URL(params.realm);
    } catch {
      throw new RegistryError(
        `${what}: the registry's token realm is not a URL: ${JSON.stringify(params.realm)}`,
      );
    }
    // One token for the whole push: the scope of this repository asked with push, whatever the
    // first challenge (a HEAD's) named.
    const mine = `repository:${this.repository.path}:`;
    const scope = params.scope?.startsWith(mine) ? `${mine}pull,push` : params.scope;
    if (params.service !== undefined) realm.searchParams.set('service', params.service);
    if (scope) realm.searchParams.set('scope', scope);
    const tokenWhat = `${what}: getting a token from ${realm.origin}${realm.pathname}`;
    const answer = await this.exchange(
      tokenWhat,
      'GET',
      realm,
      { accept: 'application/json', ...(this.creds ? { authorization: basic(this.creds) } : {}) },
      undefined,
      signal,
    );
    if (answer.status !== 200) {
      const e = this.failure(tokenWhat, answer);
      throw answer.status === 401 ? new RegistryError(e.message) : e;
    }
    let token: unknown;
    try {
      const o = JSON.parse(answer.body.toString('utf8')) as { token?: unknown; access_token?: unknown };
      token = o.token ?? o.access_token;
    } catch {}
    if (typeof token !== 'string' || token === '')
      throw new RegistryError(`${tokenWhat}: the answer has no token (want {"token":"…"})`);
    this.auth = { kind: 'bearer', token };
    return true;
  }

  /** One HTTP exchange: any status resolves; no answer, a broken connection or an abort rejects. */
  private exchange(
    what: string,
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: Body | undefined,
    signal: AbortSignal,
  ): Promise<Res> {
    const mine = url.origin === this.origin;
    const tls =
      url.protocol === 'https:'
        ? {
            // The registry: --registry-ca alone (or the system's); another host (a token realm):
            // the system's CAs and --registry-ca.
            ...(this.ca ? { ca: mine ? this.ca : [...rootCertificates, this.ca.toString('utf8')] } : {}),
            rejectUnauthorized: !this.o.insecureTLS,
          }
        : {};
    const request = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise<Res>((resolve, reject) => {
      let settled = false;
      let req: ClientRequest | undefined;
      let timer: NodeJS.Timeout | undefined;
      const finish = (err: Error | undefined, value?: Res) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (err) {
          req?.destroy();
          reject(err);
        } else resolve(value!);
      };
      // No answer (or no upload progress) for timeoutMs: a large layer may take longer in all.
      const alive = () => {
        clearTimeout(timer);
        timer = setTimeout(
          () =>
            finish(
              new RegistryError(
                `${what}: ${method} ${url.host}: no answer within ${this.timeoutMs / 1000} s (${this.o.timeoutFlag ?? '--kubelet-timeout'})`,
              ),
            ),
          this.timeoutMs,
        );
      };
      const onAbort = () => finish(new RegistryError(`${what}: aborted`));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      alive();
      req = request(
        {
          ...urlToHttpOptions(url),
          method,
          headers: { 'user-agent': 'claimkit-capture-agent', ...headers },
          agent: false,
          ...tls,
        },
        (res) => {
          alive();
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            alive();
            size += c.length;
            if (size > MAX_ANSWER)
              finish(new RegistryError(`${what}: answer larger than ${MAX_ANSWER} bytes`));
            else chunks.push(c);
          });
          res.on('end', () =>
            finish(undefined, {
              status: res.statusCode ?? 0,
              statusText: res.statusMessage ?? '',
              headers: res.headers,
              body: Buffer.concat(chunks),
            }),
          );
          res.on('error', (e: NodeJS.ErrnoException) => finish(netError(what, method, url, e)));
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => finish(netError(what, method, url, e)));
      if (!body) req.end();
      else if ('bytes' in body) req.end(body.bytes);
      else {
        const file = createReadStream(body.file);
        file.on('data', alive);
        file.on('error', (e) =>
          finish(new RegistryError(`${what}: cannot read ${body.file}: ${(e as Error).message}`)),
        );
        req.on('close', () => file.destroy());
        file.pipe(req);
      }
    });
  }
}

function basic(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
}

function netError(what: string, method: string, url: URL, e: NodeJS.ErrnoException): RegistryError {
  if (e.code && TLS_CODES.test(e.code)) {
    const why = e.message.split(';')[0];
    return new RegistryError(
      `${what}: ${method} ${url.host}: the registry's TLS certificate was not verified (${e.code}: ${why}): give the CA that signed it (--registry-ca FILE) or turn verification off (--registry-insecure-tls)`,
    );
  }
  const code = e.code && !e.message.includes(e.code) ? ` (${e.code})` : '';
  return new RegistryError(`${what}: ${method} ${url.host}: ${e.message}${code}`, {
    retriable: e.code !== undefined && NET_RETRY.test(e.code),
  });
}
