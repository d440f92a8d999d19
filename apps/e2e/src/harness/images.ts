// The images a real node runs, built without Docker (apps/e2e/images/build-images.sh: buildah,
// cached under <cache>/images): node-base, every packages/<c>/Dockerfile tagged
// ghcr.io/claimkit/<c>:<version>, the sandbox (pause) image and the workload image, each as an OCI
// archive a runtime imports (`ctr -n k8s.io images import FILE`, `kind load image-archive FILE`).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './paths.ts';

export const BUILD_IMAGES_SCRIPT = join(repoRoot, 'apps/e2e/images/build-images.sh');

export interface BuiltImage {
  /** node-base, pause, workload or a component (controller, webhook, cli). */
  name: string;
  /** The reference the archive carries (org.opencontainers.image.ref.name) and a runtime imports. */
  ref: string;
  /** The OCI archive. */
  archive: string;
}

export type ImagesResult = { ok: true; images: BuiltImage[] } | { ok: false; reason: string };

/** Parses the script's stdout: one `name<TAB>ref<TAB>path` line per image. */
export function parseImageLines(stdout: string): BuiltImage[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const [name, ref, archive] = l.split('\t');
      if (!name || !ref || !archive)
        throw new Error(`build-images.sh: unexpected output line ${JSON.stringify(l)}`);
      return { name, ref, archive };
    });
}

/**
 * Builds (or finds cached) the named images, all by default. `{ ok: false, reason }` when the
 * machine cannot build them (not root, no apt-get, no go or npm: exit 2, the script's one line),
 * so a test file can skip with that reason; a failed build rejects with the failed step and its log.
 */
export function buildImages(
  opts: { only?: string[]; log?: (chunk: string) => void } = {},
): Promise<ImagesResult> {
  const log = opts.log ?? ((c: string) => process.stderr.write(c));
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [BUILD_IMAGES_SCRIPT, ...(opts.only ?? [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      log(d);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) {
        try {
          resolve({ ok: true, images: parseImageLines(out) });
        } catch (e) {
          reject(e);
        }
        return;
      }
      const unavailable = /^build-images: unavailable: .*$/m.exec(err)?.[0];
      if (code === 2 && unavailable) resolve({ ok: false, reason: unavailable });
      else
        reject(
          new Error(
            `apps/e2e/images/build-images.sh failed (exit ${code}):\n${err.split('\n').slice(-50).join('\n')}`,
          ),
        );
    });
  });
}
