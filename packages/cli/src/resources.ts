// The four claimkit kinds as `claimctl get` sees them: names, short names and printer columns.
import {
  ANNOTATION_SHARD,
  type Capture,
  claimExpiry,
  formatSelector,
  nodeNameOf,
  type PodClaim,
  type PodClaimSet,
  type PodPool,
  podNameOf,
  sourcePodOf,
} from '@claimkit/core';
import { UsageError } from './args.ts';
import { age, humanDuration, orNone } from './output.ts';

export type ResourceKind = 'Capture' | 'PodPool' | 'PodClaim' | 'PodClaimSet';

interface Column<T> {
  header: string;
  wide?: boolean;
  value(o: T, now: number): string;
}

export interface ResourceInfo<T = unknown> {
  kind: ResourceKind;
  plural: string;
  singular: string;
  short: string;
  columns: Column<T>[];
}

const AGE = <T extends { metadata: { creationTimestamp?: string } }>(): Column<T> => ({
  header: 'AGE',
  value: (o, now) => age(o.metadata.creationTimestamp, now),
});

const captures: ResourceInfo<Capture> = {
  kind: 'Capture',
  plural: 'captures',
  singular: 'capture',
  short: 'cap',
  columns: [
    { header: 'PHASE', value: (c) => c.status?.phase ?? 'Pending' },
    { header: 'HOLDER', value: (c) => orNone(c.status?.claim?.holder.name) },
    { header: 'TOKEN', value: (c) => orNone(c.status?.claim?.token) },
    { header: 'EPOCH', value: (c) => String(c.status?.epoch ?? 0) },
    {
      header: 'LEASE',
      value: (c, now) => {
        const claim = c.status?.claim;
        if (!claim) return '<none>';
        const left = claimExpiry(claim) - now;
        return left > 0 ? humanDuration(left) : 'expired';
      },
    },
    { header: 'ATTEMPTS', wide: true, value: (c) => String(c.status?.attempts ?? 0) },
    { header: 'BACKEND', wide: true, value: (c) => c.spec.backend?.type ?? 'External' },
    { header: 'RESULT', wide: true, value: (c) => orNone(c.status?.result?.ref) },
    AGE<Capture>(),
  ],
};

const podpools: ResourceInfo<PodPool> = {
  kind: 'PodPool',
  plural: 'podpools',
  singular: 'podpool',
  short: 'pool',
  columns: [
    // MIN IDLE is the scale subresource's replicas (kubectl scale, HPA, KEDA).
    { header: 'MIN IDLE', value: (p) => String(p.spec.minIdle) },
    { header: 'TOTAL', value: (p) => String(p.status?.total ?? 0) },
    { header: 'IDLE', value: (p) => String(p.status?.idle ?? 0) },
    { header: 'BOUND', value: (p) => String(p.status?.bound ?? 0) },
    { header: 'DRAINING', value: (p) => String(p.status?.draining ?? 0) },
    { header: 'UPDATED', value: (p) => String(p.status?.updated ?? 0) },
    { header: 'OUTDATED', value: (p) => String(p.status?.outdated ?? 0) },
    { header: 'MAX PODS', wide: true, value: (p) => String(p.spec.maxPods) },
    { header: 'RELEASE', wide: true, value: (p) => p.spec.releasePolicy },
    { header: 'TEMPLATE', wide: true, value: (p) => orNone(p.status?.templateHash) },
    { header: 'SELECTOR', wide: true, value: (p) => orNone(p.status?.selector) },
    {
      header: 'PDB MAX UNAVAILABLE',
      wide: true,
      value: (p) =>
        p.spec.disruptionBudget ? String(p.spec.disruptionBudget.maxUnavailable ?? 0) : '<none>',
    },
    // spec.source: the Capture whose fenced result seeds the pods, and whether there is one.
    { header: 'SOURCE', wide: true, value: (p) => orNone(p.spec.source?.captureName) },
    { header: 'SOURCE READY', wide: true, value: (p) => orNone(sourceReadyOf(p)) },
    // The controller shard it is pinned to (modulo the shard count); <none>: its name's hash decides.
    { header: 'SHARD PIN', wide: true, value: (p) => orNone(p.metadata.annotations?.[ANNOTATION_SHARD]) },
    AGE<PodPool>(),
  ],
};

const podclaims: ResourceInfo<PodClaim> = {
  kind: 'PodClaim',
  plural: 'podclaims',
  singular: 'podclaim',
  short: 'pc',
  columns: [
    { header: 'POOL', value: (c) => c.spec.poolName },
    {
      header: 'PHASE',
      value: (c) => (c.metadata.deletionTimestamp ? 'Terminating' : (c.status?.phase ?? 'Pending')),
    },
    { header: 'POD', value: (c) => orNone(podNameOf(c)) },
    { header: 'SOURCE POD', value: (c) => orNone(sourcePodOf(c)) },
    { header: 'WAITING', value: (c) => orNone(waitingOf(c)?.reason) },
    { header: 'NODE', wide: true, value: (c) => orNone(nodeNameOf(c)) },
    { header: 'ADDRESS', wide: true, value: (c) => orNone(c.status?.address?.podIPs.join(',')) },
    { header: 'MIGRATIONS', wide: true, value: (c) => String(c.status?.migrations ?? 0) },
    { header: 'LOST POLICY', wide: true, value: (c) => c.spec.lostPolicy ?? 'Rebind' },
    { header: 'POD METADATA', wide: true, value: (c) => podMetadataSummary(c) },
    AGE<PodClaim>(),
  ],
};

/** A pool's SourceReady condition as `True` or `False (<reason>)`; undefined without spec.source. */
function sourceReadyOf(p: PodPool): string | undefined {
  const c = p.status?.conditions?.find((x) => x.type === 'SourceReady');
  if (!p.spec.source || !c) return undefined;
  return c.status === 'True' ? 'True' : `${c.status} (${c.reason})`;
}

/** Where a claim's pod is, in one line: `10.1.0.5,fd00::5 on 10.0.0.2, ports http:8080/TCP`. */
export function addressOf(c: PodClaim): string | undefined {
  const a = c.status?.address;
  if (!a) return undefined;
  const ports = (a.ports ?? []).map(
    (p) => `${p.name ? `${p.name}:` : ''}${p.containerPort}/${p.protocol ?? 'TCP'}`,
  );
  return `${a.podIPs.join(',')}${a.hostIP ? ` on ${a.hostIP}` : ''}${ports.length ? `, ports ${ports.join(' ')}` : ''}`;
}

/** Why a claim has no pod: its Bound condition while False (reason and message), else undefined. */
export function waitingOf(c: PodClaim): { reason: string; message: string } | undefined {
  const cond = (c.status?.conditions ?? []).find((x) => x.type === 'Bound');
  return cond && cond.status === 'False' && !podNameOf(c)
    ? { reason: cond.reason, message: cond.message }
    : undefined;
}

/** `labels: a=b; annotations: k` — the keys a claim puts on its pod, for one table cell. */
function podMetadataSummary(c: PodClaim): string {
  const md = c.spec.podMetadata;
  const labels = Object.entries(md?.labels ?? {}).map(([k, v]) => `${k}=${v}`);
  const annotations = Object.keys(md?.annotations ?? {});
  const parts = [
    ...(labels.length ? [`labels: ${labels.join(',')}`] : []),
    ...(annotations.length ? [`annotations: ${annotations.join(',')}`] : []),
  ];
  return orNone(parts.join('; ') || undefined);
}

const podclaimsets: ResourceInfo<PodClaimSet> = {
  kind: 'PodClaimSet',
  plural: 'podclaimsets',
  singular: 'podclaimset',
  short: 'pcs',
  columns: [
    { header: 'REPLICAS', value: (s) => String(s.spec.replicas) },
    { header: 'BOUND', value: (s) => String(s.status?.boundReplicas ?? 0) },
    { header: 'PENDING', value: (s) => String(s.status?.pending ?? 0) },
    { header: 'MIGRATING', value: (s) => String(s.status?.migrating ?? 0) },
    { header: 'LOST', value: (s) => String(s.status?.lost ?? 0) },
    { header: 'POOL', wide: true, value: (s) => s.spec.template.spec.poolName },
    { header: 'SELECTOR', wide: true, value: (s) => formatSelector(s.spec.selector) },
    AGE<PodClaimSet>(),
  ],
};

export const RESOURCES = [captures, podpools, podclaims, podclaimsets] as ResourceInfo[];

/** `pc`, `podclaim`, `podclaims`, `podclaims.claimkit.dev`, `PodClaim` all name the same kind. */
export function resolveResource(name: string): ResourceInfo {
  const n = name.toLowerCase().replace(/\.claimkit\.dev$/, '');
  const r = RESOURCES.find((x) => n === x.plural || n === x.singular || n === x.short);
  if (!r) {
    throw new UsageError(
      `unknown resource type ${JSON.stringify(name)} (want one of: ${RESOURCES.map((x) => `${x.plural} (${x.short})`).join(', ')})`,
    );
  }
  return r;
}
