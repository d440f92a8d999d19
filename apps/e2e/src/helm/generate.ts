// Writes deploy/helm/claimkit from chart.ts. `--check` writes nothing and exits 1 when a file is out
// of date.   node --conditions=source apps/e2e/src/helm/generate.ts [--check]
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHART_DIR, chartFiles } from './chart.ts';

const check = process.argv.includes('--check');
let stale = 0;
for (const f of chartFiles()) {
  const path = fileURLToPath(new URL(f.path, CHART_DIR));
  if (existsSync(path) && readFileSync(path, 'utf8') === f.text) continue;
  stale++;
  if (check) console.error(`out of date: deploy/helm/claimkit/${f.path}`);
  else {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, f.text);
    console.log(`wrote deploy/helm/claimkit/${f.path}`);
  }
}
if (check && stale > 0) {
  console.error('run: node --conditions=source apps/e2e/src/helm/generate.ts');
  process.exit(1);
}
