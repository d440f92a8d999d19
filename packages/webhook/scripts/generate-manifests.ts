// Writes deploy/webhook/*.yaml from packages/webhook/src/manifests.ts.
// `--check` writes nothing and exits 1 when a file is out of date.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { renderManifestFile, webhookManifests } from '../src/manifests.ts';

const check = process.argv.includes('--check');
const dir = new URL('../../../deploy/webhook/', import.meta.url);
mkdirSync(dir, { recursive: true });
let stale = 0;
for (const f of webhookManifests()) {
  const file = new URL(f.file, dir);
  const text = renderManifestFile(f);
  const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  if (current === text) continue;
  stale++;
  if (check) console.error(`out of date: deploy/webhook/${f.file}`);
  else {
    writeFileSync(file, text);
    console.log(`wrote deploy/webhook/${f.file}`);
  }
}
if (check && stale > 0) {
  console.error('run: node --conditions=source packages/webhook/scripts/generate-manifests.ts');
  process.exit(1);
}
