// Where the release publishes each component's image, and the reference the manifests (deploy/, the
// Helm chart, `claimctl manifests`) run: the registry below, tagged with the release's version
// (release.generated.ts, written from the packages' version by `pnpm manifests`).
import { CLAIMKIT_VERSION } from './release.generated.ts';

/** The registry and namespace every claimkit image is pushed to (the release workflow pushes here). */
export const IMAGE_REGISTRY = 'ghcr.io/claimkit';

/** The components released as images, each built from packages/<component>/Dockerfile. */
export const IMAGE_COMPONENTS = ['controller', 'webhook', 'cli'] as const;
export type ImageComponent = (typeof IMAGE_COMPONENTS)[number];

/** The repository of a component's image, without a tag: ghcr.io/claimkit/controller. */
export function imageRepository(component: ImageComponent): string {
  return `${IMAGE_REGISTRY}/${component}`;
}

/** The image a manifest runs: its repository tagged with the release's version. */
export function imageRef(component: ImageComponent, version: string = CLAIMKIT_VERSION): string {
  return `${imageRepository(component)}:${version}`;
}
