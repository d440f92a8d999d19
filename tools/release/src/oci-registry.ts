// What an OCI registry holds, asked over the distribution API (GET /v2/<name>/manifests/<tag>, HEAD
// first): the release asks before it publishes so that a version is never pushed twice, and its
// tests read back what it pushed. Anonymous or with a bearer token; TLS verified with the CA given.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface RegistryAccess {
  /** A PEM bundle the registry's certificate chains to (else the system's CAs). */
  caFile?: string;
  /** http, not https (a test registry). */
  plainHttp?: boolean;
  /** Authorization header value (e.g. `Bearer <token>`). */
  authorization?: string;
}

/** `host[:port]/path/name:tag` → its parts; the tag is required. */
export function parseImageRef(ref: string): { host: string; name: string; tag: string } {
  const slash = ref.indexOf('/');
  const colon = ref.lastIndexOf(':');
  if (slash <= 0 || colon < slash) throw new Error(`${JSON.stringify(ref)} is not HOST/NAME:TAG`);
  return { host: ref.slice(0, slash), name: ref.slice(slash + 1, colon), tag: ref.slice(colon + 1) };
}

const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

export interface ManifestAnswer {
  status: number;
  digest?: string;
  mediaType?: string;
  body?: string;
}

function get(url: string, method: 'HEAD' | 'GET', access: RegistryAccess): Promise<ManifestAnswer> {
  const req = url.startsWith('https:') ? httpsRequest : httpRequest;
  const ca = access.caFile ? readFileSync(access.caFile) : undefined;
  return new Promise((resolve, reject) => {
    const r = req(
      url,
      {
        method,
        ...(ca ? { ca } : {}),
        headers: {
          accept: MANIFEST_TYPES,
          ...(access.authorization ? { authorization: access.authorization } : {}),
        },
        timeout: 30_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => {
          const digest = res.headers['docker-content-digest'];
          resolve({
            status: res.statusCode ?? 0,
            ...(typeof digest === 'string' ? { digest } : {}),
            ...(res.headers['content-type'] ? { mediaType: res.headers['content-type'] } : {}),
            ...(method === 'GET' ? { body } : {}),
          });
        });
      },
    );
    r.once('timeout', () => r.destroy(new Error(`${method} ${url}: no answer in 30 s`)));
    r.once('error', reject);
    r.end();
  });
}

/**
 * The manifest digest the registry holds for `ref` (HOST/NAME:TAG), or undefined when it holds no
 * such tag (404). Any other answer (401, 5xx, TLS) rejects: "cannot tell" is never "absent".
 */
export async function manifestDigest(ref: string, access: RegistryAccess = {}): Promise<string | undefined> {
  const { host, name, tag } = parseImageRef(ref);
  const url = `${access.plainHttp ? 'http' : 'https'}://${host}/v2/${name}/manifests/${encodeURIComponent(tag)}`;
  const a = await get(url, 'HEAD', access);
  if (a.status === 404) return undefined;
  if (a.status !== 200 || !a.digest)
    throw new Error(`HEAD ${url}: ${a.status}${a.digest ? '' : ' without a digest'}`);
  return a.digest;
}

/** The manifest itself (its JSON), for a test that reads what was pushed. */
export async function readManifest(ref: string, access: RegistryAccess = {}): Promise<ManifestAnswer> {
  const { host, name, tag } = parseImageRef(ref);
  const url = `${access.plainHttp ? 'http' : 'https'}://${host}/v2/${name}/manifests/${encodeURIComponent(tag)}`;
  const a = await get(url, 'GET', access);
  if (a.status !== 200) throw new Error(`GET ${url}: ${a.status} ${a.body?.slice(0, 300) ?? ''}`);
  return a;
}
