// claimctl describe TYPE [NAME...]: every field, conditions and recent Events, kubectl style.
import type { Client, Condition, KubeEvent, KubeObject, PodClaim } from '@claimkit/core';
import { defineOptions } from '@claimkit/core/options';
import { parseCommand, UsageError } from '../args.ts';
import type { Ctx } from '../context.ts';
import { age, table } from '../output.ts';
import { addressOf, resolveResource, waitingOf } from '../resources.ts';
import { connect, flagsHelp, NAMESPACED_OPTIONS, namespaceOf, SELECTOR_OPTIONS, showHelp } from './common.ts';
import { fetchObjects } from './get.ts';

export const DESCRIBE_OPTIONS = defineOptions({ ...NAMESPACED_OPTIONS, ...SELECTOR_OPTIONS });

export const DESCRIBE_HELP = `Show details of claimkit resources: spec, status, conditions and recent Events.

Usage:
  claimctl describe TYPE [NAME...] [flags]

Types (short names): captures (cap), podpools (pool), podclaims (pc), podclaimsets (pcs)

Examples:
  claimctl describe pc web-x7k2p
  claimctl describe cap -l app=db

${flagsHelp(DESCRIBE_OPTIONS)}`;

/** `poolName` -> `Pool Name`, as kubectl describe prints field names. */
export function fieldTitle(k: string): string {
  const words = k.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function block(v: unknown, indent: number, lines: string[]): void {
  const pad = ' '.repeat(indent);
  if (Array.isArray(v)) {
    for (const item of v) {
      if (item !== null && typeof item === 'object') {
        const sub: string[] = [];
        block(item, indent + 2, sub);
        if (sub.length > 0) sub[0] = `${pad}- ${sub[0]!.trimStart()}`;
        lines.push(...sub);
      } else lines.push(`${pad}- ${String(item)}`);
    }
    return;
  }
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      if (x !== null && typeof x === 'object' && Object.keys(x).length > 0) {
        lines.push(`${pad}${fieldTitle(k)}:`);
        block(x, indent + 2, lines);
      } else {
        const shown = x !== null && typeof x === 'object' ? (Array.isArray(x) ? '[]' : '{}') : String(x);
        lines.push(`${pad}${fieldTitle(k)}:${' '}${shown}`);
      }
    }
  }
}

function mapLines(title: string, m: Record<string, string> | undefined, sep: string): string[] {
  const entries = Object.entries(m ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const label = `${title}:`.padEnd(14);
  if (entries.length === 0) return [`${label}<none>`];
  return entries.map(([k, v], i) => `${i === 0 ? label : ' '.repeat(14)}${k}${sep}${v}`);
}

export async function eventsFor(client: Client, o: KubeObject): Promise<KubeEvent[] | string> {
  try {
    const list = await client.list('Event', {
      namespace: o.metadata.namespace ?? '',
      fieldSelector: { 'involvedObject.name': o.metadata.name, 'involvedObject.kind': o.kind },
    });
    return list.items
      .filter((e) => !o.metadata.uid || !e.involvedObject.uid || e.involvedObject.uid === o.metadata.uid)
      .sort((a, b) => evTime(a).localeCompare(evTime(b)))
      .slice(-15);
  } catch (e) {
    return `<unable to list events: ${(e as Error).message}>`;
  }
}

const evTime = (e: KubeEvent) =>
  e.lastTimestamp ??
  (e as { eventTime?: string }).eventTime ??
  e.firstTimestamp ??
  e.metadata.creationTimestamp ??
  '';

export function describeObject(o: KubeObject, events: KubeEvent[] | string, now: number): string {
  const obj = o as KubeObject & {
    spec?: unknown;
    status?: { conditions?: Condition[] } & Record<string, unknown>;
  };
  const lines = [
    `Name:         ${o.metadata.name}`,
    `Namespace:    ${o.metadata.namespace ?? ''}`,
    ...mapLines('Labels', o.metadata.labels, '='),
    ...mapLines('Annotations', o.metadata.annotations, ': '),
    `API Version:  ${o.apiVersion}`,
    `Kind:         ${o.kind}`,
    'Metadata:',
    `  Creation Timestamp:  ${o.metadata.creationTimestamp ?? '<unknown>'}`,
  ];
  if (o.metadata.deletionTimestamp) lines.push(`  Deletion Timestamp:  ${o.metadata.deletionTimestamp}`);
  if (o.metadata.finalizers?.length) lines.push(`  Finalizers:          ${o.metadata.finalizers.join(', ')}`);
  if (o.metadata.ownerReferences?.length) {
    lines.push(
      `  Owner References:    ${o.metadata.ownerReferences.map((r) => `${r.kind}/${r.name}`).join(', ')}`,
    );
  }
  lines.push(
    `  Generation:          ${o.metadata.generation ?? 0}`,
    `  Resource Version:    ${o.metadata.resourceVersion ?? ''}`,
    `  UID:                 ${o.metadata.uid ?? ''}`,
  );
  if (obj.spec !== undefined) {
    lines.push('Spec:');
    block(obj.spec, 2, lines);
  }
  if (o.kind === 'PodClaim') {
    // Why a claim has no pod, in one line (its Bound condition; also listed under Conditions).
    const claim = o as PodClaim;
    const w = waitingOf(claim);
    lines.push(`Lost Policy:  ${claim.spec.lostPolicy ?? 'Rebind'}`);
    lines.push(`Address:      ${addressOf(claim) ?? '<none>'}`);
    lines.push(`Waiting:      ${w ? `${w.reason}: ${w.message}` : '<none>'}`);
  }
  const { conditions, ...status } = obj.status ?? {};
  lines.push('Status:');
  if (Object.keys(status).length === 0) lines.push('  <none>');
  else block(status, 2, lines);
  lines.push('Conditions:');
  if (!conditions?.length) lines.push('  <none>');
  else {
    lines.push(
      ...table(
        ['Type', 'Status', 'Reason', 'Age', 'Message'],
        conditions.map((c) => [c.type, c.status, c.reason, age(c.lastTransitionTime, now), c.message]),
      )
        .split('\n')
        .map((l) => `  ${l}`),
    );
  }
  lines.push('Events:');
  if (typeof events === 'string') lines.push(`  ${events}`);
  else if (events.length === 0) lines.push('  <none>');
  else {
    lines.push(
      ...table(
        ['Type', 'Reason', 'Age', 'From', 'Message'],
        events.map((e) => [
          e.type,
          e.reason,
          `${age(evTime(e), now)}${(e.count ?? 1) > 1 ? ` (x${e.count})` : ''}`,
          e.source?.component ?? (e as { reportingController?: string }).reportingController ?? '',
          e.message,
        ]),
      )
        .split('\n')
        .map((l) => `  ${l}`),
    );
  }
  return lines.join('\n');
}

export async function runDescribe(ctx: Ctx, argv: string[]): Promise<number> {
  const line = parseCommand(DESCRIBE_OPTIONS, argv);
  if (!line) return showHelp(ctx, DESCRIBE_HELP);
  const { values: v, positionals } = line;
  if (positionals.length === 0)
    throw new UsageError(
      'you must specify the type of resource to describe (captures, podpools, podclaims, podclaimsets)',
    );
  const r = resolveResource(positionals[0]!);
  const conn = await connect(ctx, v);
  const namespace = namespaceOf(v, conn);
  const objs = await fetchObjects(conn.client, r, positionals.slice(1), namespace, v.selector);
  if (objs.length === 0) {
    ctx.err(namespace === undefined ? 'No resources found' : `No resources found in ${namespace} namespace.`);
    return 0;
  }
  const texts: string[] = [];
  for (const o of objs) texts.push(describeObject(o, await eventsFor(conn.client, o), ctx.now()));
  ctx.out(texts.join('\n\n\n'));
  return 0;
}
