// The dry run's output: every artefact of the plan with what packing computed (integrity of each npm
// tarball, the chart's digest) and what only the workflow can (image digests, signatures).
import type { Digests, PackedPackage } from './artefacts.ts';
import type { ReleasePlan } from './plan.ts';

export interface Computed {
  npm: Record<string, PackedPackage>;
  /** The packaged chart, or why it was not packaged. */
  chart: (Digests & { file: string }) | { skipped: string };
}

export function formatReport(plan: ReleasePlan, c: Computed): string {
  const lines: string[] = [];
  lines.push(
    `claimkit ${plan.version}${plan.prerelease ? ' (prerelease)' : ''} at ${plan.revision}: the release would publish`,
    '',
    'npm packages (pnpm publish --provenance, access public; pnpm packs reproducibly, so the same build publishes this integrity):',
  );
  for (const p of plan.npm) {
    const packed = c.npm[p.name];
    lines.push(`  ${p.name}@${p.version}  dist-tag ${p.distTag}`);
    if (packed) {
      lines.push(
        `    tarball   ${packed.file.slice(packed.file.lastIndexOf('/') + 1)} (${packed.files} files, ${packed.size} bytes)`,
        `    integrity ${packed.integrity}`,
        `    shasum    ${packed.shasum}`,
      );
    }
  }
  lines.push(
    '',
    `images (${plan.images[0]?.platforms.join(', ')}; SBOM and provenance attestations, cosign keyless signature):`,
  );
  for (const i of plan.images) {
    lines.push(`  ${i.refs.join(', ')}`, `    from ${i.dockerfile}`);
    for (const [k, v] of Object.entries(i.labels)) lines.push(`    label ${k}=${v}`);
    lines.push('    digest    (known once pushed: the workflow builds and signs it)');
  }
  lines.push(
    '',
    'Helm chart (helm package, helm push):',
    `  ${plan.chart.repository}/${plan.chart.name}:${plan.chart.version} (appVersion ${plan.chart.appVersion})`,
  );
  if ('skipped' in c.chart) lines.push(`    ${plan.chart.packageFile}: not packaged (${c.chart.skipped})`);
  else {
    lines.push(
      `    ${plan.chart.packageFile} (${c.chart.size} bytes)`,
      `    digest    ${c.chart.sha256} (of this package: helm stamps the time, so the pushed one differs)`,
    );
  }
  lines.push(
    '',
    `kubectl plugin (krew ${plan.krew.name} ${plan.krew.version}; attached to the GitHub release ${plan.krew.releaseTag}):`,
    ...plan.krew.archives.map((a) => `  ${a.file} (${a.os}/${a.arch}, deno compile --target ${a.target})`),
    `  ${plan.krew.manifestFile}: the krew manifest; its sha256 are those of the archives the workflow packs`,
    '    (pnpm release --krew DIR, from the binaries it compiles: deno compile needs its runtime from dl.deno.land)',
  );
  lines.push('', 'git tags:', ...plan.gitTags.map((t) => `  ${t}`));
  return `${lines.join('\n')}\n`;
}
