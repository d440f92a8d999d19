// A claim says where its pod is (status.address: the pod's IPs, its node's IP, the template's
// container ports), written in the bind's own status write, moved to the target by a migration's
// start, and removed when the claim loses its pod. No write of its own: the bind stays three writes.
import { describe, expect, test } from 'vitest';
import type { Pod } from '../api/types.ts';
import { podAddress } from '../pool/pod-address.ts';
import { inPool, onNode, pod, podClaim, podPool, podStatus, ready, withState } from '../testing/fixtures.ts';
import { putAll } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import { reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodPool } from './podpool/index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });

const withPorts = (p: Pod) => {
  p.spec.containers = [
    { name: 'main', image: 'web:1', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] },
  ];
};

function idlePod(name: string, ip: string, node: string): Pod {
  return pod(
    name,
    inPool('web'),
    withState('Idle'),
    onNode(node),
    ready(),
    withPorts,
    podStatus({ podIP: ip, podIPs: [{ ip }], hostIP: `192.168.0.${node.slice(1)}` }),
  );
}

describe("a claim's address", () => {
  test('podAddress: IPs (podIPs, else podIP), host IP and ports; none without an IP', () => {
    expect(podAddress(idlePod('a', '10.0.0.1', 'n1'))).toEqual({
      podIPs: ['10.0.0.1'],
      hostIP: '192.168.0.1',
      ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    });
    expect(podAddress(pod('b', podStatus({ podIP: '10.0.0.2' })))).toEqual({ podIPs: ['10.0.0.2'] });
    expect(
      podAddress(pod('c', podStatus({ podIP: '10.0.0.3', podIPs: [{ ip: '10.0.0.3' }, { ip: 'fd00::3' }] }))),
    ).toEqual({ podIPs: ['10.0.0.3', 'fd00::3'] });
    expect(podAddress(pod('d'))).toBeUndefined();
  });

  test('written by the bind, removed when the pod is lost, written again by the next bind', async () => {
    const { clock, model, deps } = world();
    await putAll(
      model,
      podPool('web', (p) => {
        p.spec.minIdle = 0;
        p.spec.maxPods = 4;
      }),
      idlePod('pod-x', '10.0.0.1', 'n1'),
      podClaim('app', (c) => {
        c.spec.poolName = 'web';
      }),
    );
    const settle = async () => {
      for (let i = 0; i < 6; i++) {
        await reconcilePodClaim(deps, key('app'));
        await reconcilePodPool(deps, key('web'));
        clock.advance(1000);
      }
    };
    await settle();
    let claim = model.getNow('PodClaim', key('app'));
    expect(claim.status?.phase).toBe('Bound');
    expect(claim.status?.address).toEqual({
      podIPs: ['10.0.0.1'],
      hostIP: '192.168.0.1',
      ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    });
    // The pod goes away: the claim is Lost and has no address.
    await model.delete('Pod', key('pod-x'));
    model.completePodDeletions();
    await reconcilePodClaim(deps, key('app'));
    claim = model.getNow('PodClaim', key('app'));
    expect(claim.status?.phase).toBe('Lost');
    expect(claim.status?.address).toBeUndefined();
    // Another Idle pod: the claim binds again, with that pod's address.
    await putAll(model, idlePod('pod-y', '10.0.0.2', 'n2'));
    await settle();
    claim = model.getNow('PodClaim', key('app'));
    expect([claim.status?.phase, claim.status?.podName, claim.status?.address?.podIPs]).toEqual([
      'Bound',
      'pod-y',
      ['10.0.0.2'],
    ]);
  });
});
