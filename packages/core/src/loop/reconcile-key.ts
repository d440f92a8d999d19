// The reconcile key both the controller's work queue and the simulator's queues carry:
// `<Kind>|<namespace>/<name>`, one per object of a reconciled kind.
export type ReconcileKind = 'Capture' | 'PodClaim' | 'PodClaimSet' | 'PodPool';
export const RECONCILE_KINDS: readonly ReconcileKind[] = ['Capture', 'PodClaim', 'PodClaimSet', 'PodPool'];

export function reconcileKey(kind: ReconcileKind, namespace: string, name: string): string {
  return `${kind}|${namespace}/${name}`;
}

export interface ParsedReconcileKey {
  kind: ReconcileKind;
  namespace: string;
  name: string;
}

export function parseReconcileKey(key: string): ParsedReconcileKey {
  const bar = key.indexOf('|');
  const slash = key.indexOf('/', bar);
  const kind = key.slice(0, bar) as ReconcileKind;
  if (bar < 0 || slash < 0 || !RECONCILE_KINDS.includes(kind)) {
    throw new Error(`not a reconcile key (want <Kind>|<namespace>/<name>): ${JSON.stringify(key)}`);
  }
  return { kind, namespace: key.slice(bar + 1, slash), name: key.slice(slash + 1) };
}
