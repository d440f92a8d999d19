// Writes deploy/crds/<plural>.claimkit.dev.yaml from core's schemas (packages/core/src/schema).
// `--check` writes nothing and exits 1 when a file is out of date.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { crdFileName, KIND_SCHEMAS, renderCrdFile, toYaml } from '../src/schema/index.ts';

const check = process.argv.includes('--check');
const dir = new URL('../../../deploy/crds/', import.meta.url);
mkdirSync(dir, { recursive: true });
let stale = 0;
for (const k of Object.values(KIND_SCHEMAS)) {
  const file = new URL(crdFileName(k), dir);
  const text = renderCrdFile(k, toYaml);
  const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  if (current === text) continue;
  stale++;
  if (check) console.error(`out of date: deploy/crds/${crdFileName(k)}`);
  else {
    writeFileSync(file, text);
    console.log(`wrote deploy/crds/${crdFileName(k)}`);
  }
}
if (check && stale > 0) {
  console.error('run: node packages/core/scripts/generate-crds.ts');
  process.exit(1);
}
