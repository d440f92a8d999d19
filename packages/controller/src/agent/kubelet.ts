// The capture agent's default capture: a checkpoint of the holder's container by its own node's
// kubelet (the ContainerCheckpoint API, KEP-2008), called directly on the kubelet's port:
//
//   1. GET  https://{host}:{port}/pods   the kubelet's pod list: the pod must be on this node and
//      have the request's UID (a re-created pod of the same name is not the holder); an empty
//      container means the pod's first container.
//   2. POST https://{host}:{port}/checkpoint/{namespace}/{pod}/{container}
//      -> {"items":["/var/lib/kubelet/checkpoints/checkpoint-<pod>_<ns>-<container>-<time>.tar"]}
//      once the archive is written.
//   3. GET /pods again: if the pod of that name now has another UID, the archive may be the new
//      pod's, so the job fails rather than hand it out.
//   4. The archive's basename is looked up in `checkpointDir` (the kubelet's checkpoint directory as
//      this process sees it, a host mount: the kubelet's root directory may differ from the mount
//      path, so only the basename is trusted), moved to `storeDir`/<namespace>/<capture>/<token>.tar
//      (atomically replacing an earlier attempt of the same token) and hashed.
//   5. The ref: checkpoint://<node><stored path>@sha256:<hex> (ref.ts). With `image` the stored
//      archive is also pushed as a checkpoint OCI image (image.ts, registry.ts) to
//      <repository>/<namespace>-<capture>:<token>, and the ref is image:<that repository>@sha256:<hex
//      of its manifest>, which a pool's pods on any node can be restored from.
//
// The kubelet authorizes GET /pods as nodes/pods get and POST /checkpoint as nodes/checkpoint create
// (fine-grained kubelet authorization; an older kubelet asks for nodes/proxy for both). The
// bearer token is read from `tokenFile` on every call (a projected ServiceAccount token rotates).
// TLS is verified against `caFile` (or the system's CAs); only `insecureTLS` turns verification off.
import { createHash } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { request } from 'node:https';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { captureRepository, pushCheckpointImage } from './image.ts';
import { formatCheckpointRef, type ImageRepository, parseImageRepository } from './ref.ts';
import type { RegistryOptions } from './registry.ts';
import type { AgentJobRequest } from './state.ts';

export const SERVICE_ACCOUNT_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';
export const KUBELET_PORT = 10250;
export const KUBELET_TIMEOUT_MS = 120_000;
export const KUBELET_CHECKPOINT_DIR = '/var/lib/kubelet/checkpoints';
export const AGENT_STORE_DIR = '/var/lib/claimkit-agent/archives';
export const AGENT_STATE_DIR = '/var/lib/claimkit-agent/state';

type Log = (line: { level: 'debug' | 'info' | 'warn' | 'error'; msg: string; [k: string]: unknown }) => void;

export interface KubeletCaptureOptions {
  /** The kubelet's address (default $NODE_IP, the node's IP from the downward API). */
  host?: string;
  /** Default 10250. */
  port?: number;
  /** Bearer token, re-read on every call (default the pod's ServiceAccount token). */
  tokenFile?: string;
  /** PEM CA bundle the kubelet's serving certificate is verified against (default: the system's CAs). */
  caFile?: string;
  /** Do not verify the kubelet's certificate (kubelets often serve a self-signed one). */
  insecureTLS?: boolean;
  /** Per kubelet call (default 120 s). */
  timeoutMs?: number;
  /** The kubelet's checkpoint directory as mounted here (default /var/lib/kubelet/checkpoints). */
  checkpointDir?: string;
  /** Where archives are kept, per namespace/capture/token (default /var/lib/claimkit-agent/archives). */
  storeDir?: string;
  /** This node's name, for the ref and to refuse requests meant for another node (default $NODE_NAME). */
  nodeName?: string;
  /**
   * How long to wait before asking again while an earlier checkpoint of the same container still
   * runs (default 2 s; up to timeoutMs in all): after the agent's own restart mid-job, the kubelet
   * is still checkpointing for the agent that died.
   */
  busyRetryMs?: number;
  /** Push each archive as a checkpoint image to this repository and report an image: ref. */
  image?: CheckpointImageOptions;
  log?: Log;
}

export interface CheckpointImageOptions
  extends Pick<
    RegistryOptions,
    'caFile' | 'insecureTLS' | 'plainHTTP' | 'authFile' | 'attempts' | 'backoffMs'
  > {
  /** `host[:port]/path`: a capture's images go to `<path>/<namespace>-<capture>`, tagged with the token. */
  repository: string;
  /** Per registry request (default: the kubelet's `timeoutMs`). */
  timeoutMs?: number;
}

/**
 * The runtime's words for "a checkpoint of this container is still running" (seen on containerd
 * 2.4 after a kubelet, controller or agent restart mid-checkpoint): worth asking again. The
 * controller's Kubelet backend reads the same answers the same way.
 */
export const CHECKPOINT_BUSY = /cannot pause a paused container|code = DeadlineExceeded/;

export class KubeletError extends Error {
  override readonly name = 'KubeletError';
}

/** A DNS-1123 label (namespace, pod) or subdomain (capture): nothing that can leave a directory. */
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Where the archive the kubelet reports at `kubeletPath` is, as this process sees it: its basename
 * in `checkpointDir`. The kubelet's path is on the node, under its own root directory (e.g.
 * /var/lib/kubelet or /var/data/kubelet); the agent sees the node's checkpoint directory through a
 * host mount that may sit elsewhere, so only the file name is carried over.
 */
export function archiveOnHost(kubeletPath: string, checkpointDir: string): string {
  const name = basename(kubeletPath);
  if (!name || name === '.' || name === '..' || kubeletPath.endsWith('/'))
    throw new KubeletError(`the kubelet reported no archive file name: ${JSON.stringify(kubeletPath)}`);
  return join(resolve(checkpointDir), name);
}

/** Where the archive of `req` is stored: `storeDir`/<namespace>/<capture>/<token>.tar (absolute). */
export function storedArchivePath(
  storeDir: string,
  req: Pick<AgentJobRequest, 'namespace' | 'capture' | 'token'>,
): string {
  if (!LABEL.test(req.namespace))
    throw new KubeletError(`namespace ${JSON.stringify(req.namespace)} is not a DNS label`);
  if (!SUBDOMAIN.test(req.capture))
    throw new KubeletError(`capture ${JSON.stringify(req.capture)} is not a DNS subdomain`);
  if (!Number.isInteger(req.token) || req.token < 1)
    throw new KubeletError(`token ${req.token} is not a positive integer`);
  return join(resolve(storeDir), req.namespace, req.capture, `${req.token}.tar`);
}

/**
 * Moves the archive at `src` to `dest` (replacing an earlier one atomically) and returns its SHA-256.
 * Across filesystems (the kubelet's directory and the store are separate mounts) it copies to a
 * temporary file beside `dest`, flushes it, renames it over `dest` and removes `src`.
 */
export async function storeArchive(
  src: string,
  dest: string,
  log?: Log,
): Promise<{ sha256: string; replaced: boolean }> {
  mkdirSync(dirname(dest), { recursive: true });
  const replaced = existsSync(dest);
  try {
    renameSync(src, dest);
    return { sha256: await sha256File(dest), replaced };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
  }
  const tmp = `${dest}.tmp-${process.pid}`;
  const hash = createHash('sha256');
  try {
    await pipeline(
      createReadStream(src),
      new Transform({
        transform(chunk: Buffer, _enc, cb) {
          hash.update(chunk);
          cb(null, chunk);
        },
      }),
      createWriteStream(tmp, { mode: 0o600, flush: true }),
    );
    renameSync(tmp, dest);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw e;
  }
  try {
    unlinkSync(src);
  } catch (e) {
    log?.({
      level: 'warn',
      msg: 'archive copied to the store, but the original could not be removed',
      src,
      error: (e as Error).message,
    });
  }
  return { sha256: hash.digest('hex'), replaced };
}

export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

interface KubeletPod {
  metadata?: { name?: unknown; namespace?: unknown; uid?: unknown };
  spec?: { containers?: { name?: unknown }[] };
}

const TLS_CODES =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_.*|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/** The kubelet's HTTPS API as the agent uses it (node:https; no client library). */
export class KubeletClient {
  readonly host: string;
  readonly port: number;
  private readonly tokenFile: string;
  private readonly caFile: string | undefined;
  private readonly insecureTLS: boolean;
  private readonly timeoutMs: number;

  constructor(
    o: Pick<KubeletCaptureOptions, 'host' | 'port' | 'tokenFile' | 'caFile' | 'insecureTLS' | 'timeoutMs'>,
  ) {
    this.host = o.host ?? process.env.NODE_IP ?? '';
    this.port = o.port ?? KUBELET_PORT;
    this.tokenFile = o.tokenFile ?? SERVICE_ACCOUNT_TOKEN_FILE;
    this.caFile = o.caFile;
    this.insecureTLS = o.insecureTLS ?? false;
    this.timeoutMs = o.timeoutMs ?? KUBELET_TIMEOUT_MS;
  }

  url(path: string): string {
    const h = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `https://${h}:${this.port}${path}`;
  }

  /** One call; resolves with any HTTP status, rejects (KubeletError) on no answer. */
  call(
    method: 'GET' | 'POST',
    path: string,
    signal: AbortSignal,
    maxBytes: number,
  ): Promise<{ status: number; body: string }> {
    const what = `kubelet ${method} ${this.url(path)}`;
    if (!this.host)
      return Promise.reject(new KubeletError('no kubelet host to call (set --kubelet-host or $NODE_IP)'));
    let token: string;
    let ca: Buffer | undefined;
    try {
      token = readFileSync(this.tokenFile, 'utf8').trim();
    } catch (e) {
      return Promise.reject(
        new KubeletError(`${what}: cannot read the bearer token ${this.tokenFile}: ${(e as Error).message}`),
      );
    }
    try {
      ca = this.caFile ? readFileSync(this.caFile) : undefined;
    } catch (e) {
      return Promise.reject(
        new KubeletError(`${what}: cannot read the CA file ${this.caFile}: ${(e as Error).message}`),
      );
    }
    return new Promise((resolvePromise, reject) => {
      let settled = false;
      const finish = (err: Error | undefined, value?: { status: number; body: string }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolvePromise(value!);
      };
      const req = request(
        {
          host: this.host,
          port: this.port,
          path,
          method,
          headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
          ...(ca ? { ca } : {}),
          rejectUnauthorized: !this.insecureTLS,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > maxBytes) {
              finish(new KubeletError(`${what}: answer larger than ${maxBytes} bytes`));
              req.destroy();
            } else chunks.push(c);
          });
          res.on('end', () =>
            finish(undefined, { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', (e) => finish(new KubeletError(`${what}: ${e.message}`)));
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code && TLS_CODES.test(e.code)) {
          // Node's own advice (--use-system-ca) is not this agent's: say which flags decide.
          const why = e.message.split(';')[0];
          return finish(
            new KubeletError(
              `${what}: the kubelet's TLS certificate was not verified (${e.code}: ${why}): give the CA that signed it (--kubelet-ca FILE) or turn verification off (--kubelet-insecure-tls)`,
            ),
          );
        }
        finish(
          new KubeletError(
            `${what}: ${e.message}${e.code && !e.message.includes(e.code) ? ` (${e.code})` : ''}`,
          ),
        );
      });
      const timer = setTimeout(() => {
        finish(new KubeletError(`${what}: no answer within ${this.timeoutMs / 1000} s (--kubelet-timeout)`));
        req.destroy();
      }, this.timeoutMs);
      const onAbort = () => {
        finish(new KubeletError(`${what}: aborted`));
        req.destroy();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      req.end();
    });
  }

  /** The JSON of a 2xx answer; a readable KubeletError for anything else. */
  async json(method: 'GET' | 'POST', path: string, signal: AbortSignal, maxBytes: number): Promise<unknown> {
    const what = `kubelet ${method} ${this.url(path)}`;
    const r = await this.call(method, path, signal, maxBytes);
    if (r.status < 200 || r.status >= 300) {
      const excerpt = r.body.trim().slice(0, 300);
      const hint =
        r.status === 401
          ? ': the kubelet did not accept the bearer token'
          : r.status === 403
            ? `: the agent's identity needs ${method === 'GET' ? 'get on nodes/pods' : 'create on nodes/checkpoint'} (or, on a kubelet without fine-grained authorization, on nodes/proxy; ClusterRole claimkit-capture-agent)`
            : r.status === 404 && path.startsWith('/checkpoint/')
              ? ': the container is not on this kubelet, or its ContainerCheckpoint feature is off'
              : '';
      throw new KubeletError(`${what}: HTTP ${r.status}${excerpt ? `: ${excerpt}` : ''}${hint}`);
    }
    try {
      return JSON.parse(r.body);
    } catch {
      throw new KubeletError(`${what}: the answer is not JSON: ${JSON.stringify(r.body.slice(0, 200))}`);
    }
  }

  /** The pods the kubelet runs (GET /pods). */
  async pods(signal: AbortSignal): Promise<KubeletPod[]> {
    const body = await this.json('GET', '/pods', signal, 64 * 1024 * 1024);
    const items = (body as { items?: unknown } | null)?.items;
    if (!Array.isArray(items))
      throw new KubeletError(`kubelet GET ${this.url('/pods')}: the answer is not a pod list (no items)`);
    return items as KubeletPod[];
  }

  /** Checkpoints a container; resolves with the archive's path as the kubelet names it. */
  async checkpoint(namespace: string, pod: string, container: string, signal: AbortSignal): Promise<string> {
    const e = encodeURIComponent;
    const path = `/checkpoint/${e(namespace)}/${e(pod)}/${e(container)}`;
    const body = await this.json('POST', path, signal, 1024 * 1024);
    const items = (body as { items?: unknown } | null)?.items;
    if (!Array.isArray(items) || typeof items[0] !== 'string' || items[0] === '')
      throw new KubeletError(
        `kubelet POST ${this.url(path)}: the answer names no archive (want {"items":["<path>"]})`,
      );
    return items[0];
  }
}

/** client.checkpoint, asked again while the runtime says an earlier checkpoint still runs. */
async function checkpointWhenFree(
  client: KubeletClient,
  namespace: string,
  pod: string,
  container: string,
  signal: AbortSignal,
  o: { retryMs: number; forMs: number; onBusy: (error: string) => void },
): Promise<string> {
  const deadline = Date.now() + o.forMs;
  for (;;) {
    try {
      return await client.checkpoint(namespace, pod, container, signal);
    } catch (e) {
      const message = (e as Error).message;
      if (!(e instanceof KubeletError) || !CHECKPOINT_BUSY.test(message) || Date.now() + o.retryMs > deadline)
        throw e;
      o.onBusy(message);
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, o.retryMs);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(t);
            reject(new KubeletError('aborted'));
          },
          { once: true },
        );
      });
    }
  }
}

function findPod(pods: KubeletPod[], namespace: string, name: string): KubeletPod | undefined {
  return pods.find((p) => p.metadata?.namespace === namespace && p.metadata?.name === name);
}

/**
 * The kubelet checkpoint capture: resolves to a checkpoint:// ref (an image: ref with `image`), or
 * throws a readable Error.
 */
export function kubeletCapture(
  o: KubeletCaptureOptions = {},
): (req: AgentJobRequest, signal: AbortSignal) => Promise<string> {
  const client = new KubeletClient(o);
  const checkpointDir = o.checkpointDir ?? KUBELET_CHECKPOINT_DIR;
  const storeDir = o.storeDir ?? AGENT_STORE_DIR;
  const nodeName = o.nodeName ?? process.env.NODE_NAME ?? '';
  const log = o.log;
  const image = o.image;
  const imageBase: ImageRepository | undefined = image && parseImageRepository(image.repository);
  const { repository: _, ...registry } = image ?? { repository: '' };
  return async (req, signal) => {
    const pod = `${req.namespace}/${req.pod}`;
    const aborted = () => {
      if (signal.aborted) throw new KubeletError('aborted');
    };
    if (!LABEL.test(req.namespace) || !SUBDOMAIN.test(req.pod))
      throw new KubeletError(`pod ${JSON.stringify(pod)} is not a valid namespace/name`);
    const dest = storedArchivePath(storeDir, req);
    if (!req.uid)
      throw new KubeletError(
        `the request names no pod UID: the agent checkpoints a pod only after checking its UID`,
      );
    if (nodeName && req.node && req.node !== nodeName)
      throw new KubeletError(
        `the request is for a pod on node ${req.node}, but this agent runs on node ${nodeName}`,
      );
    const node = nodeName || req.node;
    if (!node) throw new KubeletError('no node name for the ref (set --node-name or $NODE_NAME)');

    const found = findPod(await client.pods(signal), req.namespace, req.pod);
    if (!found) throw new KubeletError(`pod ${pod} is not on node ${node} (not in its kubelet's pod list)`);
    const uid = found.metadata?.uid;
    if (uid !== req.uid)
      throw new KubeletError(
        `pod ${pod} on node ${node} has UID ${String(uid)}, not ${req.uid}: it is not the holder (a re-created pod of the same name); not checkpointed`,
      );
    const names = (found.spec?.containers ?? [])
      .map((c) => c.name)
      .filter((n): n is string => typeof n === 'string');
    const container = req.container || names[0];
    if (!container) throw new KubeletError(`pod ${pod} has no containers in its kubelet's pod list`);
    if (!names.includes(container))
      throw new KubeletError(
        `pod ${pod} has no container ${container} (it has ${names.join(', ') || 'none'})`,
      );
    aborted();

    log?.({
      level: 'info',
      msg: 'checkpointing',
      pod,
      uid: req.uid,
      container,
      capture: req.capture,
      token: req.token,
    });
    const reported = await checkpointWhenFree(client, req.namespace, req.pod, container, signal, {
      retryMs: o.busyRetryMs ?? 2000,
      forMs: o.timeoutMs ?? 120_000,
      onBusy: (error) =>
        log?.({ level: 'info', msg: 'an earlier checkpoint still runs; asking again', pod, error }),
    });
    const src = archiveOnHost(reported, checkpointDir);
    // The name is checked before the checkpoint and after it: a pod re-created under the same name
    // in between could be the one the kubelet checkpointed.
    const after = findPod(await client.pods(signal), req.namespace, req.pod);
    if (after && after.metadata?.uid !== req.uid) {
      try {
        unlinkSync(src);
      } catch {}
      throw new KubeletError(
        `pod ${pod} was replaced (UID ${String(after.metadata?.uid)}) while it was checkpointed: the archive may not be the holder's; discarded`,
      );
    }
    let size: number;
    try {
      size = statSync(src).size;
    } catch (e) {
      throw new KubeletError(
        `the kubelet wrote ${reported}, but ${src} cannot be read (${(e as Error).message}): is --checkpoint-dir the kubelet's checkpoint directory, mounted from the node?`,
      );
    }
    aborted();
    const { sha256, replaced } = await storeArchive(src, dest, log);
    if (replaced)
      log?.({
        level: 'warn',
        msg: 'replaced the archive of an earlier attempt of the same token',
        path: dest,
        capture: req.capture,
        token: req.token,
      });
    if (!isAbsolute(dest)) throw new KubeletError(`stored path ${dest} is not absolute`);
    const stored = { pod, container, kubeletPath: reported, path: dest, bytes: size, sha256 };
    if (!image || !imageBase) {
      log?.({ level: 'info', msg: 'checkpoint stored', ...stored });
      return formatCheckpointRef({ node, path: dest, sha256 });
    }
    aborted();
    // The archive stays stored as without a registry. Fencing is unchanged: this only reports the
    // ref of the job's token; the controller's fenced terminal write makes it a Capture's result, so
    // an image pushed for a superseded token (its own tag, never the current one's) is never used.
    const started = Date.now();
    const pushed = await pushCheckpointImage(
      captureRepository(imageBase, req),
      { file: dest, sha256, size },
      {
        namespace: req.namespace,
        pod: req.pod,
        container,
        capture: req.capture,
        token: req.token,
        created: new Date(),
      },
      {
        ...registry,
        timeoutMs: image.timeoutMs ?? o.timeoutMs ?? KUBELET_TIMEOUT_MS,
        ...(log ? { log } : {}),
      },
      signal,
    );
    log?.({
      level: 'info',
      msg: 'checkpoint stored',
      ...stored,
      image: pushed.ref,
      tag: pushed.tag,
      layerBytes: size,
      layerUploaded: pushed.layerUploaded,
      pushMs: Date.now() - started,
    });
    return pushed.ref;
  };
}
