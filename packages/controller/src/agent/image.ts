// A checkpoint archive as a checkpoint OCI image, the form containerd (2.3+,
// enable_experimental_restore_via_create) and CRI-O restore a container from when it is the
// container's image:
//   - one layer: the archive's bytes as they are (an uncompressed tar, so its digest is its diff_id
//     and the SHA-256 the agent already computed), mediaType application/vnd.oci.image.layer.v1.tar;
//   - a config naming the architecture and os, with rootfs.diff_ids = [the layer];
//   - annotations on the manifest: containerd reads org.criu.checkpoint.container.name from the
//     image's target blob (the manifest), CRI-O io.kubernetes.cri-o.annotations.checkpoint.name;
//     both are the checkpointed container's name. The config repeats them as Labels.
// JSON is written with a fixed key order: the digests are of these exact bytes.
import { endianness } from 'node:os';
import { formatImageRef, formatImageRepository, IMAGE_NAME_MAX, type ImageRepository } from './ref.ts';
import { type Blob, OCI_MANIFEST, RegistryClient, type RegistryOptions, sha256Digest } from './registry.ts';
import type { AgentJobRequest } from './state.ts';

export const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER_TAR = 'application/vnd.oci.image.layer.v1.tar';

export const CHECKPOINT_ANNOTATIONS = {
  containerName: 'org.criu.checkpoint.container.name',
  crioName: 'io.kubernetes.cri-o.annotations.checkpoint.name',
  podName: 'org.criu.checkpoint.pod.name',
  podNamespace: 'org.criu.checkpoint.pod.namespace',
  capture: 'dev.claimkit.capture',
  token: 'dev.claimkit.token',
  created: 'org.opencontainers.image.created',
} as const;

/** Node's process.arch as Go's GOARCH (what image configs say). */
export function goArch(arch: string = process.arch): string {
  const go: Record<string, string> = { x64: 'amd64', ia32: '386', mipsel: 'mipsle' };
  if (arch === 'ppc64') return endianness() === 'LE' ? 'ppc64le' : 'ppc64';
  return go[arch] ?? arch;
}

export interface CheckpointImageMeta {
  namespace: string;
  pod: string;
  /** The checkpointed container. */
  container: string;
  capture: string;
  token: number;
  created: Date;
  /** GOARCH (default: this process's). */
  architecture?: string;
}

export interface CheckpointImage {
  config: Blob & { bytes: Buffer };
  manifest: Buffer;
  /** `sha256:<hex>` of `manifest`. */
  digest: string;
  annotations: Record<string, string>;
}

/** The config and manifest of the image whose one layer is the archive `layer` (digest, size). */
export function checkpointImage(
  layer: { digest: string; size: number },
  m: CheckpointImageMeta,
): CheckpointImage {
  const A = CHECKPOINT_ANNOTATIONS;
  const created = m.created.toISOString();
  const annotations: Record<string, string> = {
    [A.containerName]: m.container,
    [A.crioName]: m.container,
    [A.podName]: m.pod,
    [A.podNamespace]: m.namespace,
    [A.capture]: `${m.namespace}/${m.capture}`,
    [A.token]: String(m.token),
    [A.created]: created,
  };
  const configBytes = Buffer.from(
    JSON.stringify({
      architecture: m.architecture ?? goArch(),
      os: 'linux',
      created,
      rootfs: { type: 'layers', diff_ids: [layer.digest] },
      config: { Labels: annotations },
    }),
  );
  const config = { digest: sha256Digest(configBytes), size: configBytes.length, bytes: configBytes };
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: OCI_CONFIG, digest: config.digest, size: config.size },
      layers: [{ mediaType: OCI_LAYER_TAR, digest: layer.digest, size: layer.size }],
      annotations,
    }),
  );
  return { config, manifest, digest: sha256Digest(manifest), annotations };
}

/**
 * A capture's repository: the base's path plus `/<namespace>-<capture>` (valid path components: a
 * DNS label and a DNS subdomain joined by a dash). Throws when the name would be too long.
 */
export function captureRepository(
  base: ImageRepository,
  req: Pick<AgentJobRequest, 'namespace' | 'capture'>,
): ImageRepository {
  const leaf = `${req.namespace}-${req.capture}`;
  const r = { host: base.host, path: base.path ? `${base.path}/${leaf}` : leaf };
  if (formatImageRepository(r).length > IMAGE_NAME_MAX)
    throw new Error(
      `image name ${formatImageRepository(r)} is longer than ${IMAGE_NAME_MAX} characters (shorten --image-repository)`,
    );
  return r;
}

export interface PushedImage {
  /** `host[:port]/path`. */
  repository: string;
  tag: string;
  /** `sha256:<hex>` of the manifest. */
  digest: string;
  /** `image:<repository>@sha256:<hex>` (ref.ts). */
  ref: string;
  /** False when the registry had the layer already. */
  layerUploaded: boolean;
}

/**
 * Pushes the archive at `archive.file` (its SHA-256 hex and size known) as the checkpoint image of
 * `meta` to `repository:<token>`; resolves to what was pushed, or throws a RegistryError.
 */
export async function pushCheckpointImage(
  repository: ImageRepository,
  archive: { file: string; sha256: string; size: number },
  meta: CheckpointImageMeta,
  o: RegistryOptions,
  signal: AbortSignal,
): Promise<PushedImage> {
  const client = new RegistryClient(repository, o);
  const layer = { digest: `sha256:${archive.sha256}`, size: archive.size, file: archive.file };
  const image = checkpointImage(layer, meta);
  const layerUploaded = await client.pushBlob(layer, 'layer', signal);
  await client.pushBlob(image.config, 'config', signal);
  const tag = String(meta.token);
  const digest = await client.pushManifest(tag, image.manifest, OCI_MANIFEST, signal);
  return {
    repository: client.name,
    tag,
    digest,
    ref: formatImageRef({ repository: client.name, sha256: digest.slice('sha256:'.length) }),
    layerUploaded,
  };
}
