// (Named serve-*.ts: it starts the entries and talks HTTPS, so it may use node:* modules.)
// Test helpers for the runtime tests and the benchmark: a self-signed certificate made with openssl,
// the entries started as child processes, and an HTTPS client that trusts the certificate.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { type Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const WEBHOOK_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface Cert {
  dir: string;
  certFile: string;
  keyFile: string;
  cert: Buffer;
}

export function makeCert(dir = mkdtempSync(join(tmpdir(), 'claimkit-webhook-')), cn = 'localhost'): Cert {
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  writeCert(certFile, keyFile, cn);
  return { dir, certFile, keyFile, cert: readFileSync(certFile) };
}

/** Writes a fresh self-signed pair for localhost and 127.0.0.1 (a new key each time). */
export function writeCert(certFile: string, keyFile: string, cn = 'localhost'): void {
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
      `/CN=${cn}`,
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
}

export function opensslAvailable(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The Deno binary the `deno` npm package installed, if any. */
export function denoBinary(): string | undefined {
  for (const p of [
    join(WEBHOOK_DIR, 'node_modules', 'deno', 'deno'),
    join(WEBHOOK_DIR, 'node_modules', '.bin', 'deno'),
  ]) {
    if (!existsSync(p)) continue;
    try {
      execFileSync(p, ['--version'], { stdio: 'ignore', timeout: 30_000 });
      return p;
    } catch {}
  }
  return undefined;
}

export interface Started {
  child: ChildProcess;
  port: number;
  lines: string[];
  stop(): Promise<void>;
}

export type Runtime = 'node' | 'deno';

export function entryCommand(runtime: Runtime, deno?: string): { cmd: string; args: string[] } {
  if (runtime === 'node') {
    return { cmd: process.execPath, args: ['--conditions=@claimkit/source', join('src', 'main-node.ts')] };
  }
  return {
    cmd: deno!,
    args: [
      'run',
      '--node-modules-dir=manual',
      '--conditions=@claimkit/source',
      '-A',
      join('src', 'main-deno.ts'),
    ],
  };
}

/** Starts a script and waits for its "webhook listening" log line. */
export function startProcess(cmd: string, args: string[], timeoutMs = 60_000): Promise<Started> {
  const child = spawn(cmd, args, {
    cwd: WEBHOOK_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
  });
  const lines: string[] = [];
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${cmd} did not start in ${timeoutMs} ms:\n${lines.join('\n')}`));
    }, timeoutMs);
    const onLine = (line: string) => {
      lines.push(line);
      try {
        const j = JSON.parse(line) as { msg?: string; port?: number };
        if (j.msg === 'webhook listening' && typeof j.port === 'number') {
          clearTimeout(timer);
          resolve({ child, port: j.port, lines, stop });
        }
      } catch {}
    };
    createInterface({ input: child.stdout! }).on('line', onLine);
    createInterface({ input: child.stderr! }).on('line', (l) => lines.push(l));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited with ${code}:\n${lines.join('\n')}`));
    });
  });
}

export function startEntry(
  runtime: Runtime,
  cert: Cert,
  extra: string[] = [],
  deno?: string,
): Promise<Started> {
  const { cmd, args } = entryCommand(runtime, deno);
  return startProcess(cmd, [
    ...args,
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--tls-cert-file',
    cert.certFile,
    '--tls-private-key-file',
    cert.keyFile,
    '--claim-index',
    'off',
    ...extra,
  ]);
}

export interface HttpsResult {
  status: number;
  body: string;
  /** SHA-256 fingerprint of the certificate the server presented. */
  fingerprint: string;
}

/** One HTTPS request to 127.0.0.1 trusting exactly `ca`; a new connection unless an agent is given. */
export function httpsRequest(
  port: number,
  path: string,
  opts: { ca: Buffer | string; method?: string; body?: string; agent?: Agent },
): Promise<HttpsResult> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        path,
        method: opts.method ?? 'GET',
        ca: opts.ca,
        agent: opts.agent ?? false,
        headers: opts.body !== undefined ? { 'content-type': 'application/json' } : {},
        timeout: 10_000,
      },
      (res) => {
        const socket = res.socket as { getPeerCertificate?: () => { fingerprint256?: string } };
        const fingerprint = socket.getPeerCertificate?.().fingerprint256 ?? '';
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), fingerprint });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(opts.body);
  });
}
