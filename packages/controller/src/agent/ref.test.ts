import { describe, expect, it } from 'vitest';
import { formatCheckpointRef, parseCheckpointRef } from './ref.ts';

const hex = 'ab'.repeat(32);

describe('checkpoint refs: checkpoint://<node><absolute path>@sha256:<hex>', () => {
  it('formats and parses back', () => {
    const r = {
      node: 'node-1.zone-a',
      path: '/var/lib/claimkit-agent/archives/ns/db.snap/7.tar',
      sha256: hex,
    };
    const ref = formatCheckpointRef(r);
    expect(ref).toBe(
      `checkpoint://node-1.zone-a/var/lib/claimkit-agent/archives/ns/db.snap/7.tar@sha256:${hex}`,
    );
    expect(parseCheckpointRef(ref)).toEqual(r);
  });

  it('takes the digest from the end, so an @ in the path stays in the path', () => {
    expect(parseCheckpointRef(`checkpoint://n/data/a@b/1.tar@sha256:${hex}`)).toEqual({
      node: 'n',
      path: '/data/a@b/1.tar',
      sha256: hex,
    });
  });

  it('reads the Kubelet backend’s refs, which carry no digest', () => {
    const ref =
      'checkpoint://claimkit-node-0/var/lib/kubelet/checkpoints/checkpoint-p_ns-main-2026-12-05T00:14:12Z.tar';
    expect(parseCheckpointRef(ref)).toEqual({
      node: 'claimkit-node-0',
      path: '/var/lib/kubelet/checkpoints/checkpoint-p_ns-main-2026-12-05T00:14:12Z.tar',
    });
    expect(formatCheckpointRef(parseCheckpointRef(ref))).toBe(ref);
  });

  it('refuses what is not one, saying why', () => {
    for (const [ref, why] of [
      [`snapshot://ns/c/p@3`, /want checkpoint:\/\//],
      [`checkpoint://node-1:/var/lib/kubelet/checkpoints/c.tar`, /is not a node name/],
      [`checkpoint://node-1/a.tar@sha256:${hex.toUpperCase()}`, /digest is not @sha256/],
      [`checkpoint://node-1/a.tar@sha256:abc`, /digest is not @sha256/],
      [`checkpoint:///a.tar@sha256:${hex}`, /no node and absolute path/],
      [`checkpoint://node-1@sha256:${hex}`, /no node and absolute path/],
      [`checkpoint://Node_1/a.tar@sha256:${hex}`, /is not a node name/],
      [`checkpoint://n/a/../b.tar@sha256:${hex}`, /empty, \. or \.\. segments/],
      [`checkpoint://n//a.tar@sha256:${hex}`, /empty, \. or \.\. segments/],
    ] as const)
      expect(() => parseCheckpointRef(ref), ref).toThrow(why);
  });

  it('formats only what parses', () => {
    expect(() => formatCheckpointRef({ node: 'n', path: 'rel.tar', sha256: hex })).toThrow(/absolute/);
    expect(() => formatCheckpointRef({ node: 'n/x', path: '/a', sha256: hex })).toThrow(/node name/);
    expect(() => formatCheckpointRef({ node: 'n', path: '/a', sha256: 'x' })).toThrow(/sha256/);
  });
});
