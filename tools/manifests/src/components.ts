// deploy/policies, deploy/controller and deploy/webhook: each file one of its builder's ManifestFiles
// (core's admission policies, the controller's and the webhook's manifests.ts).
import { controllerManifests } from '@claimkit/controller';
import { type ManifestFile, policiesManifests } from '@claimkit/core';
import { webhookManifests } from '@claimkit/webhook';
import { type GeneratedFile, generatedHeader } from './generated-file.ts';
import { renderManifestText } from './render.ts';

interface Component {
  dir: string;
  files: (version: string) => ManifestFile[];
  /** Where the objects are built, and what to change (for the header). */
  from: string;
  change: string;
}

const COMPONENTS: Component[] = [
  {
    dir: 'deploy/policies',
    files: () => policiesManifests(),
    from: 'packages/core/src/policies',
    change: 'change the policies in core',
  },
  {
    dir: 'deploy/controller',
    files: (version) => controllerManifests({ version }),
    from: 'packages/controller/src/manifests.ts',
    change: 'change manifests.ts',
  },
  {
    dir: 'deploy/webhook',
    files: (version) => webhookManifests({ version }),
    from: 'packages/webhook/src/manifests.ts',
    change: 'change manifests.ts',
  },
];

/** The components' files, their images tagged with `version`. */
export function componentFiles(version: string): GeneratedFile[] {
  return COMPONENTS.flatMap((c) => {
    const header = generatedHeader('#', c.from, c.change);
    return c.files(version).map((f) => ({
      path: `${c.dir}/${f.file}`,
      text: renderManifestText(f, header),
      objects: f.objects,
    }));
  });
}
