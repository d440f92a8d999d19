// The release's version as TypeScript, for the code that names it: core's (images.ts tags the images
// the manifests run with it) and the CLI's own copy (`claimctl --version` and its user agent; the CLI
// keeps --help and --version free of core's imports).

import { tsString } from './cli-module.ts';
import { type GeneratedFile, generatedHeader } from './generated-file.ts';

export const VERSION_MODULE_PATHS = [
  'packages/core/src/manifests/release.generated.ts',
  'packages/cli/src/version.generated.ts',
] as const;

export function versionModules(version: string): GeneratedFile[] {
  const text = [
    generatedHeader('//', 'the version of the fixed changesets group (packages/*/package.json)'),
    '/** The version of this release: every claimkit package, image and chart carries it. */\n',
    `export const CLAIMKIT_VERSION = ${tsString(version)};\n`,
  ].join('');
  return VERSION_MODULE_PATHS.map((path) => ({ path, text }));
}
