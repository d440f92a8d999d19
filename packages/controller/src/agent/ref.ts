// The ref the capture agent's kubelet capture reports (the Capture's `status.result.ref`):
//
//   checkpoint://<node><absolute path>@sha256:<64 hex>
//   e.g. checkpoint://node-1/var/lib/claimkit-agent/archives/team-a/db-snap/7.tar@sha256:9f86d0…
//
// <node> is the node the archive lives on (a Kubernetes node name: no `/` or `@`), <absolute path>
// is where the agent stored it on that node (`--store-dir`/<namespace>/<capture>/<token>.tar; the
// chart mounts the host directory at the same path, so it is the path on the node too), and the
// digest is the SHA-256 of the archive's bytes, so whoever restores from it can check that it is
// the archive that was captured. The controller's Kubelet backend reports the same form without
// the digest (`checkpoint://<node><kubelet's archive path>`: it never reads the archive).
//
// With --image-repository the agent pushes the archive as a checkpoint OCI image and reports
//
//   image:<host[:port]/path>@sha256:<64 hex>
//   e.g. image:registry.example.com/claimkit/team-a-db-snap@sha256:4c1f…
//
// the repository and the digest of the image's manifest: what a pool's pod runs as its image (core's
// SOURCE_IMAGE_PREFIX), pinned by digest so a later push of the tag cannot change it.
import { SOURCE_IMAGE_PREFIX } from '@claimkit/core';

export interface CheckpointRef {
  node: string;
  /** Absolute path of the archive on the node. */
  path: string;
  /** SHA-256 of the archive, 64 lowercase hex digits (absent in the Kubelet backend's refs). */
  sha256?: string;
}

const SCHEME = 'checkpoint://';
const DIGEST = /@sha256:([0-9a-f]{64})$/;
const NODE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function formatCheckpointRef(r: CheckpointRef): string {
  if (!NODE.test(r.node)) throw new Error(`checkpoint ref: not a node name: ${JSON.stringify(r.node)}`);
  if (!r.path.startsWith('/')) throw new Error(`checkpoint ref: path must be absolute: ${r.path}`);
  if (r.sha256 === undefined) return `${SCHEME}${r.node}${r.path}`;
  if (!/^[0-9a-f]{64}$/.test(r.sha256))
    throw new Error(`checkpoint ref: not a sha256 hex digest: ${r.sha256}`);
  return `${SCHEME}${r.node}${r.path}@sha256:${r.sha256}`;
}

/** Reads a ref back; throws an Error saying what is wrong with it. */
export function parseCheckpointRef(ref: string): CheckpointRef {
  const bad = (why: string) => new Error(`not a checkpoint ref (${why}): ${JSON.stringify(ref)}`);
  if (!ref.startsWith(SCHEME)) throw bad(`want ${SCHEME}<node>/<path>[@sha256:<hex>]`);
  const digest = DIGEST.exec(ref);
  if (!digest && /@sha256:/.test(ref)) throw bad('the digest is not @sha256:<64 lowercase hex digits>');
  const rest = ref.slice(SCHEME.length, digest ? digest.index : undefined);
  const slash = rest.indexOf('/');
  if (slash <= 0) throw bad('no node and absolute path');
  const node = rest.slice(0, slash);
  const path = rest.slice(slash);
  if (!NODE.test(node)) throw bad(`node ${JSON.stringify(node)} is not a node name`);
  if (
    path
      .split('/')
      .slice(1)
      .some((p) => p === '' || p === '..' || p === '.')
  )
    throw bad('path has empty, . or .. segments');
  return digest ? { node, path, sha256: digest[1]! } : { node, path };
}

/** An image repository: `host` (with `:port`, IPv6 in brackets) and `path` ("" for none). */
export interface ImageRepository {
  host: string;
  path: string;
}

// The distribution spec's reference grammar (distribution/reference): domain components may be
// mixed case, path components are lowercase alphanumerics joined by `.`, `_`, `__` or dashes.
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const HOST = new RegExp(
  `^(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?$`,
);
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
/** distribution's NameTotalLengthMax: host and path together. */
export const IMAGE_NAME_MAX = 255;

/**
 * `host[:port][/path]` as the agent's --image-repository takes it: the first component must be the
 * registry (it has a `.` or a `:`, or is `localhost`; no implied docker.io), the path components
 * lowercase. Throws an Error saying what is wrong.
 */
export function parseImageRepository(s: string): ImageRepository {
  const bad = (why: string) => new Error(`not an image repository (${why}): ${JSON.stringify(s)}`);
  if (s.length > IMAGE_NAME_MAX) throw bad(`longer than ${IMAGE_NAME_MAX} characters`);
  const slash = s.indexOf('/');
  const host = slash < 0 ? s : s.slice(0, slash);
  const path = slash < 0 ? '' : s.slice(slash + 1);
  if (!HOST.test(host)) throw bad(`${JSON.stringify(host)} is not a registry host[:port]`);
  if (!/[.:]/.test(host) && host !== 'localhost')
    throw bad(
      `the first component must be the registry host: want HOST[:PORT]/PATH, e.g. registry.example.com/claimkit`,
    );
  if (slash >= 0)
    for (const c of path.split('/'))
      if (!PATH_COMPONENT.test(c))
        throw bad(
          `path component ${JSON.stringify(c)} is not lowercase letters and digits joined by ".", "_", "__" or "-"`,
        );
  return { host, path };
}

export function formatImageRepository(r: ImageRepository): string {
  return r.path ? `${r.host}/${r.path}` : r.host;
}

export interface ImageRef {
  /** `host[:port]/path` (the image name without tag or digest). */
  repository: string;
  /** SHA-256 of the image's manifest, 64 lowercase hex digits. */
  sha256: string;
}

export function formatImageRef(r: ImageRef): string {
  parseImageRepository(r.repository);
  if (!/^[0-9a-f]{64}$/.test(r.sha256)) throw new Error(`image ref: not a sha256 hex digest: ${r.sha256}`);
  return `${SOURCE_IMAGE_PREFIX}${r.repository}@sha256:${r.sha256}`;
}

/** Reads an image ref back (`image:<repository>@sha256:<hex>`); throws an Error saying what is wrong. */
export function parseImageRef(ref: string): ImageRef {
  const bad = (why: string) => new Error(`not an image ref (${why}): ${JSON.stringify(ref)}`);
  if (!ref.startsWith(SOURCE_IMAGE_PREFIX))
    throw bad(`want ${SOURCE_IMAGE_PREFIX}<host[:port]/path>@sha256:<hex>`);
  const at = ref.lastIndexOf('@');
  if (at < 0) throw bad('no @sha256:<hex> digest');
  const digest = /^sha256:([0-9a-f]{64})$/.exec(ref.slice(at + 1));
  if (!digest) throw bad('the digest is not sha256:<64 lowercase hex digits>');
  const repository = ref.slice(SOURCE_IMAGE_PREFIX.length, at);
  try {
    parseImageRepository(repository);
  } catch (e) {
    throw bad((e as Error).message);
  }
  return { repository, sha256: digest[1]! };
}
