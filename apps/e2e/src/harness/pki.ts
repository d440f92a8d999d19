// Per-run PKI: a throwaway CA, the API server's serving certificate, one client certificate per
// identity, and the service-account signing key. Keys come from node:crypto (EC P-256); the
// certificates are signed with the `openssl` CLI (node:crypto cannot create certificates).
import { execFile, execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CertPaths {
  cert: string;
  key: string;
}

export interface Identity extends CertPaths {
  /** The user name the API server sees (certificate CN). */
  user: string;
  groups: string[];
}

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serving: CertPaths;
  /** The real node kubelet's serving certificate (its IP), when the run has a real node. */
  nodeServing: CertPaths;
  saKey: string;
  saPub: string;
  identities: {
    admin: Identity;
    user: Identity;
    controllerManager: Identity;
    scheduler: Identity;
    kwok: Identity;
    /** The real node's kubelet: system:node:<node>, group system:nodes (the Node authorizer). */
    node: Identity;
    /** kube-proxy: system:kube-proxy (bound to system:node-proxier by default). */
    kubeProxy: Identity;
  };
}

/** The non-admin identity tests can use: authenticated, but no RBAC binding grants it anything. */
export const E2E_USER = 'claimkit-e2e-user';
export const E2E_USER_GROUP = 'claimkit-e2e-users';

function writeKey(path: string): void {
  const { privateKey } = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  writeFileSync(path, privateKey, { mode: 0o600 });
}

function opensslConfig(cn: string, orgs: string[], ext: string[]): string {
  const dn = [`CN = ${cn}`, ...orgs.map((o, i) => `${i}.O = ${o}`)];
  return ['[req]', 'distinguished_name = dn', 'prompt = no', '[dn]', ...dn, '[ext]', ...ext, ''].join('\n');
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') throw new Error('the local e2e cluster needs the `openssl` command on PATH');
    throw new Error(`openssl ${args.join(' ')} failed: ${err.stderr ?? err.message}`);
  }
}

async function issue(
  dir: string,
  name: string,
  cn: string,
  orgs: string[],
  ext: string[],
  ca: { cert: string; key: string },
): Promise<CertPaths> {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.crt`);
  const cfg = join(dir, `${name}.cnf`);
  const csr = join(dir, `${name}.csr`);
  writeKey(key);
  writeFileSync(cfg, opensslConfig(cn, orgs, ext));
  await openssl(['req', '-new', '-key', key, '-config', cfg, '-out', csr]);
  await openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-set_serial',
    `0x${randomBytes(12).toString('hex')}`,
    '-days',
    '30',
    '-sha256',
    '-extfile',
    cfg,
    '-extensions',
    'ext',
    '-out',
    cert,
  ]);
  return { cert, key };
}

const clientExt = [
  'basicConstraints = critical,CA:FALSE',
  'keyUsage = critical,digitalSignature,keyEncipherment',
  'extendedKeyUsage = clientAuth',
];

const servingExt = (names: string[]) => [
  'basicConstraints = critical,CA:FALSE',
  'keyUsage = critical,digitalSignature,keyEncipherment',
  'extendedKeyUsage = serverAuth',
  `subjectAltName = ${names.join(',')}`,
];

export async function createPki(
  dir: string,
  opts: { serviceIP: string; node?: { name: string; ip: string } },
): Promise<Pki> {
  const ca = await createCa(dir, 'claimkit-e2e-ca');
  const caCert = ca.cert;
  const caKey = ca.key;

  const client = async (name: string, user: string, groups: string[]): Promise<Identity> => ({
    ...(await issue(dir, name, user, groups, clientExt, ca)),
    user,
    groups,
  });
  const nodeName = opts.node?.name ?? 'no-real-node';
  const nodeIPs = opts.node ? [`IP:${opts.node.ip}`] : [];
  const [serving, nodeServing, admin, user, controllerManager, scheduler, kwok, node, kubeProxy] =
    await Promise.all([
      issue(
        dir,
        'apiserver',
        'kube-apiserver',
        [],
        servingExt([
          'DNS:localhost',
          'DNS:kubernetes',
          'DNS:kubernetes.default',
          'DNS:kubernetes.default.svc',
          'DNS:kubernetes.default.svc.cluster.local',
          'IP:127.0.0.1',
          `IP:${opts.serviceIP}`,
          ...nodeIPs,
        ]),
        ca,
      ),
      issue(
        dir,
        'kubelet-serving',
        nodeName,
        [],
        servingExt([`DNS:${nodeName}`, 'IP:127.0.0.1', ...nodeIPs]),
        ca,
      ),
      client('admin', 'claimkit-e2e-admin', ['system:masters']),
      client('user', E2E_USER, [E2E_USER_GROUP]),
      client('kube-controller-manager', 'system:kube-controller-manager', []),
      client('kube-scheduler', 'system:kube-scheduler', []),
      client('kwok', 'kwok-controller', ['system:masters']),
      client('kubelet', `system:node:${nodeName}`, ['system:nodes']),
      client('kube-proxy', 'system:kube-proxy', []),
    ]);

  const saKey = join(dir, 'sa.key');
  const saPub = join(dir, 'sa.pub');
  const sa = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  writeFileSync(saKey, sa.privateKey, { mode: 0o600 });
  writeFileSync(saPub, sa.publicKey);

  return {
    dir,
    caCert,
    caKey,
    serving,
    nodeServing,
    saKey,
    saPub,
    identities: { admin, user, controllerManager, scheduler, kwok, node, kubeProxy },
  };
}

const b64 = (path: string) => readFileSync(path).toString('base64');

/** Writes a kubeconfig with the CA and the identity's certificate embedded (portable, one file). */
export function writeKubeconfig(
  path: string,
  opts: {
    server: string;
    caCert: string;
    identity: CertPaths;
    user: string;
    name?: string;
    namespace?: string;
  },
): string {
  const name = opts.name ?? 'claimkit-e2e';
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${name}`,
    '  cluster:',
    `    server: ${opts.server}`,
    `    certificate-authority-data: ${b64(opts.caCert)}`,
    'users:',
    `- name: ${opts.user}`,
    '  user:',
    `    client-certificate-data: ${b64(opts.identity.cert)}`,
    `    client-key-data: ${b64(opts.identity.key)}`,
    'contexts:',
    `- name: ${name}`,
    '  context:',
    `    cluster: ${name}`,
    `    user: ${opts.user}`,
    ...(opts.namespace ? [`    namespace: ${opts.namespace}`] : []),
    `current-context: ${name}`,
    '',
  ].join('\n');
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

/**
 * A self-signed serving certificate for 127.0.0.1/localhost (EC P-256, one day), for servers this
 * process runs on loopback (the webhook); returns the PEM file paths inside `dir`.
 */
export function loopbackServingCert(dir: string): { certFile: string; keyFile: string } {
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
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
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile };
}

/**
 * A throwaway CA and a serving certificate it signed for `dnsNames` (a Service's names, e.g.
 * claimkit-webhook.claimkit-system.svc): what a user without cert-manager gives the chart.
 */
export async function serviceServingCert(
  dir: string,
  dnsNames: string[],
): Promise<{ caCert: string } & CertPaths> {
  const ca = await createCa(dir, 'claimkit-e2e-service-ca');
  const serving = await issue(
    dir,
    'serving',
    dnsNames[0] ?? 'service',
    [],
    servingExt(dnsNames.map((n) => `DNS:${n}`)),
    ca,
  );
  return { caCert: ca.cert, ...serving };
}

/** A fresh self-signed CA (ca.crt, ca.key) in dir. */
async function createCa(dir: string, cnPrefix: string): Promise<CertPaths> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = join(dir, 'ca.key');
  const cert = join(dir, 'ca.crt');
  const cfg = join(dir, 'ca.cnf');
  writeKey(key);
  writeFileSync(
    cfg,
    opensslConfig(
      `${cnPrefix}-${randomBytes(4).toString('hex')}`,
      [],
      [
        'basicConstraints = critical,CA:TRUE',
        'keyUsage = critical,keyCertSign,cRLSign,digitalSignature',
        'subjectKeyIdentifier = hash',
      ],
    ),
  );
  await openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    key,
    '-config',
    cfg,
    '-extensions',
    'ext',
    '-days',
    '30',
    '-sha256',
    '-out',
    cert,
  ]);
  return { cert, key };
}
