// Test support (not built into dist/): a kubelet-shaped HTTPS server for the capture agent's tests.
// It serves GET /pods (the pods it is told it runs) and POST /checkpoint/{ns}/{pod}/{container}
// (writes an archive into its checkpoint directory and reports it under its own root directory,
// /var/data/kubelet, which is not where the agent sees it), with a self-signed certificate made by
// `openssl` (as the webhook's tests do; node:crypto cannot create certificates). Any answer can be
// replaced (`respond`) by a status and body, or by no answer at all.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCert {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
}

export function opensslAvailable(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A fresh self-signed certificate for localhost and 127.0.0.1 (it is its own CA). */
export function makeTestCert(dir = mkdtempSync(join(tmpdir(), 'claimkit-agent-cert-'))): TestCert {
  const certFile = join(dir, 'kubelet.crt');
  const keyFile = join(dir, 'kubelet.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=fake-kubelet',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
}

export interface FakePod {
  namespace: string;
  name: string;
  uid: string;
  containers: string[];
}

export interface Seen {
  method: string;
  path: string;
  authorization: string | undefined;
}

/** What to answer instead: a status and body, `hang` (never answer), or undefined (the normal answer). */
export type Respond = (method: string, path: string) => { status: number; body: string } | 'hang' | undefined;

/** The root directory the fake kubelet reports paths under (not the agent's mount path). */
export const FAKE_KUBELET_ROOT = '/var/data/kubelet';

export class FakeKubelet {
  pods: FakePod[] = [];
  readonly seen: Seen[] = [];
  respond: Respond | undefined;
  /** Called after an archive is written, before the answer (e.g. to replace the pod). */
  afterCheckpoint: (() => void) | undefined;
  /** The archives written, by file name. */
  readonly archives = new Map<string, Buffer>();
  port = 0;
  private readonly server: Server;
  /** Where archives are written: the directory the agent mounts as --checkpoint-dir. */
  readonly checkpointDir: string;

  private constructor(server: Server, checkpointDir: string) {
    this.server = server;
    this.checkpointDir = checkpointDir;
  }

  static async start(cert: TestCert, checkpointDir?: string): Promise<FakeKubelet> {
    const dir = checkpointDir ?? mkdtempSync(join(tmpdir(), 'claimkit-fake-kubelet-'));
    mkdirSync(dir, { recursive: true });
    let k!: FakeKubelet;
    const server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      k.seen.push({ method, path, authorization: req.headers.authorization });
      req.resume();
      req.on('end', () => {
        const over = k.respond?.(method, path);
        if (over === 'hang') return;
        const send = (status: number, body: string) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(body);
        };
        if (over) return send(over.status, over.body);
        if (method === 'GET' && path === '/pods') {
          return send(
            200,
            JSON.stringify({
              kind: 'PodList',
              apiVersion: 'v1',
              items: k.pods.map((p) => ({
                metadata: { name: p.name, namespace: p.namespace, uid: p.uid },
                spec: { containers: p.containers.map((name) => ({ name, image: 'busybox' })) },
                status: { phase: 'Running' },
              })),
            }),
          );
        }
        const m = /^\/checkpoint\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(path);
        if (method === 'POST' && m) {
          const [ns, pod, container] = m.slice(1).map(decodeURIComponent) as [string, string, string];
          const p = k.pods.find((x) => x.namespace === ns && x.name === pod);
          if (!p?.containers.includes(container)) return send(404, '404 page not found');
          const name = `checkpoint-${pod}_${ns}-${container}-${new Date().toISOString()}.tar`;
          const bytes = Buffer.concat([
            Buffer.from(`archive of ${ns}/${pod}/${container}\n`),
            randomBytes(70_000),
          ]);
          writeFileSync(join(dir, name), bytes);
          k.archives.set(name, bytes);
          k.afterCheckpoint?.();
          return send(200, JSON.stringify({ items: [`${FAKE_KUBELET_ROOT}/checkpoints/${name}`] }));
        }
        send(404, '404 page not found');
      });
    });
    k = new FakeKubelet(server, dir);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    k.port = (server.address() as AddressInfo).port;
    return k;
  }

  /** The archive written last. */
  lastArchive(): Buffer | undefined {
    return [...this.archives.values()].at(-1);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
