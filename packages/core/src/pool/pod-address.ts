// Where a claim's pod is, as the claim's status says it (status.address): the pod's IPs, its node's
// IP and the container ports of the pool's template (the pod's containers carry them). Written in
// the bind's own status write, and in a migration's start for its target; removed when the claim has
// no pod (Lost, Pending), so an application reads where to connect from the claim alone.
import type { ClaimAddress, ContainerPortSpec, Pod } from '../api/types.ts';

/** The pod's address, or undefined while it has no IP (it is never Ready then). */
export function podAddress(pod: Pod): ClaimAddress | undefined {
  const listed = (pod.status?.podIPs as { ip?: unknown }[] | undefined)
    ?.map((x) => x.ip)
    .filter((ip): ip is string => typeof ip === 'string' && ip !== '');
  const podIPs = listed && listed.length > 0 ? listed : pod.status?.podIP ? [pod.status.podIP] : [];
  if (podIPs.length === 0) return undefined;
  const hostIP = typeof pod.status?.hostIP === 'string' && pod.status.hostIP ? pod.status.hostIP : undefined;
  const ports: ContainerPortSpec[] = [];
  for (const c of pod.spec.containers) {
    for (const p of (c.ports as ContainerPortSpec[] | undefined) ?? []) {
      if (typeof p?.containerPort !== 'number') continue;
      ports.push({
        ...(p.name ? { name: p.name } : {}),
        containerPort: p.containerPort,
        ...(p.protocol ? { protocol: p.protocol } : {}),
      });
    }
  }
  return { podIPs, ...(hostIP ? { hostIP } : {}), ...(ports.length > 0 ? { ports } : {}) };
}
