// claimctl claim create|wait|release|migrate: claim a pod of a pool (and wait until it is Bound, with
// its address), wait for an existing claim, release one, or ask the controller to migrate one.
import {
  ANNOTATION_MIGRATE,
  ANNOTATION_MIGRATE_TO,
  FINALIZER_RELEASE,
  isApiError,
  type PodClaim,
  podNameOf,
  toYaml,
} from '@claimkit/core';
import { defineOptions } from '@claimkit/core/options';
import type { ClaimedPod } from '@claimkit/kube';
import { oneOf, parseCommand, UsageError } from '../args.ts';
import { type Connection, type Ctx, EXIT } from '../context.ts';
import { CLUSTER_OPTIONS, connect, expectPositionals, flagsHelp, namespaceOf, showHelp } from './common.ts';

/** The claim operations (the completion scripts offer them). */
export const CLAIM_OPS = ['create', 'wait', 'release', 'migrate'] as const;

export const CLAIM_OPTIONS = defineOptions({
  ...CLUSTER_OPTIONS,
  name: {
    type: 'string',
    arg: 'NAME',
    help: "create: the claim's name; without it, <pool>- and 5 random characters",
  },
  wait: { type: 'bool', help: 'create: wait until the claim is Bound and print where its pod is' },
  timeout: {
    type: 'duration',
    default: 60_000,
    help: "create --wait, wait: how long to wait for a pod (then exit 1 with the claim's reason)",
  },
  keep: { type: 'bool', help: 'create --wait: keep the claim when no pod came in time (default: delete it)' },
  output: {
    type: 'enum',
    short: 'o',
    values: ['text', 'json', 'yaml', 'name'],
    default: 'text',
    help: 'output format',
  },
  to: { type: 'string', arg: 'POD', help: "migrate: to this Idle pod of the claim's pool" },
  reason: { type: 'string', arg: 'TEXT', default: 'claimctl', help: 'migrate: why' },
});

export const CLAIM_HELP = `Act on PodClaims.

Usage:
  claimctl claim create POOL [--name NAME] [--wait [--timeout 60s] [--keep]] [-o text|json|yaml|name]
  claimctl claim wait NAME [--timeout 60s] [-o text|json|yaml|name]
  claimctl claim release NAME
  claimctl claim migrate NAME [--to POD] [--reason TEXT]

create makes a PodClaim on the pool; with --wait it waits (a watch) until the claim is Bound and
prints the claim, its pod, node and address. wait does the same for an existing claim. When no pod
comes in time both exit 1 with the claim's own reason (PoolAtMaxPods, NoReadyPod, ...); create
--wait then deletes the claim unless --keep. release deletes the claim (its finalizer releases the
pod). migrate sets ${ANNOTATION_MIGRATE}=<reason> (and ${ANNOTATION_MIGRATE_TO}=<pod> with --to);
the controller binds a target, drains and releases the source, then clears the annotations.

Exit codes: 0 bound (or done), 1 no pod in time, 2 usage or API error, 4 refused by the API server
(RBAC, validation, admission).

${flagsHelp(CLAIM_OPTIONS)}`;

type Format = 'text' | 'json' | 'yaml' | 'name';

/** What create --wait and wait print for a bound claim. */
function bound(got: ClaimedPod, format: Format): string {
  const c = got.claim;
  const summary = {
    claim: c.metadata.name,
    namespace: c.metadata.namespace,
    pool: c.spec.poolName,
    pod: got.pod.metadata.name,
    node: got.pod.spec.nodeName,
    address: got.address,
  };
  switch (format) {
    case 'json':
      return JSON.stringify(summary, null, 2);
    case 'yaml':
      return toYaml(summary).trimEnd();
    case 'name':
      return `podclaim.claimkit.dev/${c.metadata.name}`;
    case 'text': {
      const ports = got.ports.map((p) => `${p.name ? `${p.name}:` : ''}${p.containerPort}`).join(',');
      return (
        `podclaim.claimkit.dev/${c.metadata.name} bound to pod ${got.pod.metadata.name} on node ` +
        `${got.pod.spec.nodeName ?? ''} at ${got.address.podIPs.join(',')}${ports ? ` ports ${ports}` : ''}`
      );
    }
  }
}

/** A claim made without waiting: as the API server answered. */
function created(c: PodClaim, format: Format): string {
  switch (format) {
    case 'json':
      return JSON.stringify(c, null, 2);
    case 'yaml':
      return toYaml(c).trimEnd();
    case 'name':
      return `podclaim.claimkit.dev/${c.metadata.name}`;
    case 'text':
      return `podclaim.claimkit.dev/${c.metadata.name} created`;
  }
}

/** The exit code and message of a wait that ended without a pod (ClaimWaitError), else undefined. */
function waitFailed(ctx: Ctx, e: unknown): number | undefined {
  if (!(e instanceof Error) || e.name !== 'ClaimWaitError') return undefined;
  const reason = (e as Error & { reason: string }).reason;
  ctx.err(`error: ${e.message}`);
  return reason === 'Refused' ? EXIT.refused : reason === 'Deleted' ? EXIT.error : EXIT.problems;
}

export async function runClaim(ctx: Ctx, argv: string[]): Promise<number> {
  const line = parseCommand(CLAIM_OPTIONS, argv);
  // Without an operation, the help says which there are (a usage error).
  if (!line || line.positionals.length === 0) return showHelp(ctx, CLAIM_HELP, line ? 2 : 0);
  const { values: v } = line;
  const op = oneOf(line.positionals[0]!, CLAIM_OPS, 'claim operation');
  const usage = {
    create: 'claimctl claim create POOL [--name NAME] [--wait]',
    wait: 'claimctl claim wait NAME',
    release: 'claimctl claim release NAME',
    migrate: 'claimctl claim migrate NAME [--to POD]',
  }[op];
  const [, arg] = expectPositionals(line.positionals, 2, 2, usage);
  if (op !== 'create' && (v.wait || v.keep || v.name !== undefined))
    throw new UsageError(`--wait, --keep and --name are create's flags (${usage})`);
  if (op === 'create' && v.keep && !v.wait) throw new UsageError('--keep needs --wait');
  const conn = await connect(ctx, v);
  const namespace = namespaceOf(v, conn)!;
  const format = v.output as Format;
  switch (op) {
    case 'create':
      return create(ctx, conn, namespace, arg!, v, format);
    case 'wait':
      return wait(ctx, conn, { namespace, name: arg! }, v.timeout, format);
    case 'release':
      return release(ctx, conn, { namespace, name: arg! });
    case 'migrate':
      return migrate(ctx, conn, { namespace, name: arg! }, v.to, v.reason);
  }
}

async function timersOf(ctx: Ctx) {
  return ctx.timers ?? (await import('@claimkit/kube')).realTimers;
}

async function create(
  ctx: Ctx,
  conn: Connection,
  namespace: string,
  pool: string,
  v: { name?: string | undefined; wait: boolean; keep: boolean; timeout: number },
  format: Format,
): Promise<number> {
  if (!v.wait) {
    try {
      const c = await conn.client.create({
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'PodClaim',
        // With the release finalizer: the controller need not add it (its bind is then two writes).
        metadata: {
          namespace,
          ...(v.name ? { name: v.name } : { generateName: `${pool}-` }),
          finalizers: [FINALIZER_RELEASE],
        },
        spec: { poolName: pool },
      } as PodClaim);
      ctx.out(created(c, format));
      return EXIT.ok;
    } catch (e) {
      if (!isApiError(e) || !['Forbidden', 'Invalid', 'AlreadyExists', 'BadRequest'].includes(e.reason))
        throw e;
      ctx.err(`error: the API server refused the PodClaim: ${e.reason} (${e.code}): ${e.message}`);
      return EXIT.refused;
    }
  }
  const { claimPod } = await import('@claimkit/kube');
  try {
    const got = await claimPod(conn.client, {
      pool,
      namespace,
      ...(v.name ? { name: v.name } : {}),
      timeoutMs: v.timeout,
      keep: v.keep,
      timers: await timersOf(ctx),
    });
    ctx.out(bound(got, format));
    return EXIT.ok;
  } catch (e) {
    const code = waitFailed(ctx, e);
    if (code === undefined) throw e;
    return code;
  }
}

async function wait(
  ctx: Ctx,
  conn: Connection,
  key: { namespace: string; name: string },
  timeoutMs: number,
  format: Format,
): Promise<number> {
  const { waitForClaim } = await import('@claimkit/kube');
  try {
    ctx.out(bound(await waitForClaim(conn.client, key, { timeoutMs, timers: await timersOf(ctx) }), format));
    return EXIT.ok;
  } catch (e) {
    const code = waitFailed(ctx, e);
    if (code === undefined) throw e;
    return code;
  }
}

async function release(
  ctx: Ctx,
  conn: Connection,
  key: { namespace: string; name: string },
): Promise<number> {
  await conn.client.delete('PodClaim', key);
  ctx.out(`podclaim.claimkit.dev/${key.name} released (deleted; its finalizer releases the pod)`);
  return EXIT.ok;
}

async function migrate(
  ctx: Ctx,
  conn: Connection,
  key: { namespace: string; name: string },
  to: string | undefined,
  reason: string,
): Promise<number> {
  const c = await conn.client.get('PodClaim', key);
  await conn.client.patch(
    'PodClaim',
    key,
    { metadata: { annotations: { [ANNOTATION_MIGRATE]: reason, [ANNOTATION_MIGRATE_TO]: to ?? null } } },
    { uid: c.metadata.uid! },
  );
  ctx.out(
    `podclaim.claimkit.dev/${key.name} migration requested${to ? ` to ${to}` : ''} (from ${podNameOf(c) || 'no pod'})`,
  );
  return EXIT.ok;
}
