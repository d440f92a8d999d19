// claimctl claim migrate NAME [--to POD]: asks the controller to migrate a claim (annotations).
import { ANNOTATION_MIGRATE, ANNOTATION_MIGRATE_TO } from '@claimkit/core';
import { defineOptions } from '@claimkit/core/options';
import { oneOf, parseCommand } from '../args.ts';
import type { Ctx } from '../context.ts';
import { CLUSTER_OPTIONS, connect, expectPositionals, flagsHelp, namespaceOf, showHelp } from './common.ts';

/** The claim operations (the completion scripts offer them). */
export const CLAIM_OPS = ['migrate'] as const;

export const CLAIM_OPTIONS = defineOptions({
  ...CLUSTER_OPTIONS,
  to: { type: 'string', arg: 'POD', help: "migrate to this Idle pod of the claim's pool" },
  reason: { type: 'string', arg: 'TEXT', default: 'claimctl', help: 'why' },
});

export const CLAIM_HELP = `Act on PodClaims.

Usage:
  claimctl claim migrate NAME [--to POD] [--reason TEXT]

Sets ${ANNOTATION_MIGRATE}=<reason> (and ${ANNOTATION_MIGRATE_TO}=<pod> with --to) on the claim;
the controller binds a target, drains and releases the source, then clears the annotations.

${flagsHelp(CLAIM_OPTIONS)}`;

export async function runClaim(ctx: Ctx, argv: string[]): Promise<number> {
  const line = parseCommand(CLAIM_OPTIONS, argv);
  // Without an operation, the help says which there are (a usage error).
  if (!line || line.positionals.length === 0) return showHelp(ctx, CLAIM_HELP, line ? 2 : 0);
  const { values: v } = line;
  const [op, name] = expectPositionals(line.positionals, 2, 2, 'claimctl claim migrate NAME [--to POD]');
  oneOf(op!, CLAIM_OPS, 'claim operation');
  const { to, reason } = v;
  const conn = await connect(ctx, v);
  const namespace = namespaceOf(v, conn)!;
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
