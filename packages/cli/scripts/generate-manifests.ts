// Writes src/manifests.generated.ts from deploy/{crds,controller,webhook}/*.yaml, so the published
// package carries the YAML (src/manifests.test.ts fails when it drifts from deploy/).
// The drift test compares data, not text: the module is formatted with biome after writing.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderManifestModule } from '../src/manifests-source.ts';

const deploy = new URL('../../../deploy/', import.meta.url);
const target = new URL('../src/manifests.generated.ts', import.meta.url);
writeFileSync(target, renderManifestModule(deploy));
const root = new URL('../../../', import.meta.url);
execFileSync(
  fileURLToPath(new URL('node_modules/.bin/biome', root)),
  ['format', '--write', fileURLToPath(target)],
  {
    cwd: fileURLToPath(root),
    stdio: 'inherit',
  },
);
