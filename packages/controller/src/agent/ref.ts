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
