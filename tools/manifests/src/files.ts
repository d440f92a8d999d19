// Every file this package generates, built in one pass from the builders (each depends only on
// data, never on what is on disk): the CRDs, the three components, the chart from them, the CLI's
// embedded copy of deploy/, and the release's version as code. Everything that names a version
// takes it from `version` (the fixed changesets group's, version.ts), so a bump reaches them all.
import { cliModule } from './cli-module.ts';
import { componentFiles } from './components.ts';
import { crdFiles } from './crds.ts';
import type { GeneratedFile } from './generated-file.ts';
import { CHART_DIR, chartFiles } from './helm/chart.ts';
import { MONITORING_DIR, monitoringFiles } from './monitoring/files.ts';
import { versionModules } from './version-modules.ts';

/**
 * Directories whose manifests (*.yaml, *.yml, *.json) are all generated: a file there that is not in
 * generatedFiles() is stale (left behind by a removed builder) and is removed. Other files (READMEs)
 * are not touched.
 */
export const GENERATED_DIRS = [
  'deploy/crds',
  'deploy/policies',
  'deploy/controller',
  'deploy/webhook',
  CHART_DIR,
  MONITORING_DIR,
];

export interface GenerateOptions {
  /** The release's version (readWorkspaceVersion). */
  version: string;
}

export function generatedFiles(o: GenerateOptions): GeneratedFile[] {
  const crds = crdFiles();
  const deploy = [...crds, ...componentFiles(o.version)];
  return [
    ...deploy,
    ...chartFiles(crds, o.version),
    ...monitoringFiles(),
    cliModule(deploy),
    ...versionModules(o.version),
  ];
}
