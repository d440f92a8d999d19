import { SOURCE_IMAGE_PREFIX } from '@claimkit/core';
import { describe, expect, it } from 'vitest';
import {
  formatCheckpointRef,
  formatImageRef,
  parseCheckpointRef,
  parseImageRef,
  parseImageRepository,
} from './ref.ts';

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

describe('image refs: image:<host[:port]/path>@sha256:<hex>', () => {
  it('formats with core’s prefix (what a pool pod’s image becomes) and parses back', () => {
    const r = { repository: 'registry.example.com:5000/claimkit/team-a-db.snap', sha256: hex };
    const ref = formatImageRef(r);
    expect(ref).toBe(`image:registry.example.com:5000/claimkit/team-a-db.snap@sha256:${hex}`);
    expect(ref.startsWith(SOURCE_IMAGE_PREFIX)).toBe(true);
    expect(parseImageRef(ref)).toEqual(r);
    expect(parseImageRef(`image:[fd00::1]:5000/c@sha256:${hex}`)).toEqual({
      repository: '[fd00::1]:5000/c',
      sha256: hex,
    });
    expect(parseImageRef(`image:localhost/c@sha256:${hex}`).repository).toBe('localhost/c');
  });

  it('refuses what is not one, saying why', () => {
    for (const [ref, why] of [
      [`checkpoint://n/a.tar@sha256:${hex}`, /want image:/],
      ['image:registry.example.com/c:7', /no @sha256/],
      [`image:registry.example.com/c@sha256:${hex.toUpperCase()}`, /not sha256:<64 lowercase/],
      [`image:registry.example.com/c@sha512:${hex}`, /not sha256:<64 lowercase/],
      [`image:claimkit/c@sha256:${hex}`, /first component must be the registry host/],
      [`image:registry.example.com/C@sha256:${hex}`, /path component "C" is not lowercase/],
      [`image:registry.example.com//c@sha256:${hex}`, /path component "" is not/],
      [`image:registry.example.com/c-@sha256:${hex}`, /path component "c-"/],
      [`image:-bad.example.com/c@sha256:${hex}`, /is not a registry host/],
    ] as const)
      expect(() => parseImageRef(ref), ref).toThrow(why);
    expect(() => formatImageRef({ repository: 'r.example.com/c', sha256: 'x' })).toThrow(/sha256/);
    expect(() => formatImageRef({ repository: 'c', sha256: hex })).toThrow(/registry host/);
  });

  it('the repository grammar: host[:port] then lowercase path components joined by . _ __ or dashes', () => {
    expect(parseImageRepository('registry.example.com/a/b_c/d__e/f--g.h')).toEqual({
      host: 'registry.example.com',
      path: 'a/b_c/d__e/f--g.h',
    });
    expect(parseImageRepository('Registry.Example.com:443/x')).toEqual({
      host: 'Registry.Example.com:443',
      path: 'x',
    });
    expect(parseImageRepository('127.0.0.1:5000')).toEqual({ host: '127.0.0.1:5000', path: '' });
    for (const bad of [
      '',
      'reg.example.com/a..b',
      'reg.example.com/a___b',
      'reg.example.com/_a',
      'reg.example.com/',
      `r.example.com/${'a'.repeat(250)}`,
    ])
      expect(() => parseImageRepository(bad), bad).toThrow(/not an image repository/);
  });
});
