// Writes deploy/policies/*.yaml from core's admission policies (packages/core/src/policies).
// `--check` writes nothing and exits 1 when a file is out of date.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { policiesManifests, renderPolicyFile } from '../src/policies/index.ts';

const check = process.argv.includes('--check');
const dir = new URL('../../../deploy/policies/', import.meta.url);
mkdirSync(dir, { recursive: true });
let stale = 0;
for (const f of policiesManifests()) {
  const file = new URL(f.file, dir);
  const text = renderPolicyFile(f);
  const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  if (current === text) continue;
  stale++;
  if (check) console.error(`out of date: deploy/policies/${f.file}`);
  else {
    writeFileSync(file, text);
    console.log(`wrote deploy/policies/${f.file}`);
  }
}
if (check && stale > 0) {
  console.error('run: node packages/core/scripts/generate-policies.ts');
  process.exit(1);
}
