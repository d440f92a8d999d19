// claimctl claim migrate NAME [--to POD]: asks the controller to migrate a claim (annotations).
import { ANNOTATION_MIGRATE, ANNOTATION_MIGRATE_TO } from '@claimkit/core';
import { type FlagSpecs, oneOf, type Parsed, parseFlags, str } from '../args.ts';
import type { Ctx } from '../context.ts';
import { asProgram } from '../program.ts';
import { CLUSTER_HELP, connect, expectPositionals, NAMESPACED, namespaceOf } from './common.ts';

export const CLAIM_HELP = `Act on PodClaims.

Usage:
  claimctl claim migrate NAME [--to POD] [--reason TEXT]

Sets ${ANNOTATION_MIGRATE}=<reason> (and ${ANNOTATION_MIGRATE_TO}=<pod> with --to) on the claim;
the controller binds a target, drains and releases the source, then clears the annotations.

Flags:
      --to POD              migrate to this Idle pod of the claim's pool
      --reason TEXT         why (default: claimctl)
${CLUSTER_HELP}`;

export const CLAIM_FLAGS: FlagSpecs = { ...NAMESPACED, to: { type: 'string' }, reason: { type: 'string' } };

export async function runClaim(ctx: Ctx, argv: string[]): Promise<number> {
  const p: Parsed = parseFlags(argv, CLAIM_FLAGS);
  if (p.flags.help || p.positionals.length === 0) {
    ctx.out(asProgram(CLAIM_HELP, ctx.prog));
    return p.flags.help ? 0 : 2;
  }
  const [op, name] = expectPositionals(p, 2, 2, 'claimctl claim migrate NAME [--to POD]');
  oneOf(op!, ['migrate'] as const, 'claim operation');
  const to = str(p, 'to');
  const reason = str(p, 'reason') ?? 'claimctl';
  const conn = await connect(ctx, p);
  const namespace = namespaceOf(p, conn, false)!;
  const key = { namespace, name: name! };
  const c = await conn.client.get('PodClaim', key);
  await conn.client.patch(
    'PodClaim',
    key,
    { metadata: { annotations: { [ANNOTATION_MIGRATE]: reason, [ANNOTATION_MIGRATE_TO]: to ?? null } } },
    { uid: c.metadata.uid! },
  );
  ctx.out(
    `podclaim.claimkit.dev/${name} migration requested${to ? ` to ${to}` : ''} (from ${c.spec.podName || 'no pod'})`,
  );
  return 0;
}
