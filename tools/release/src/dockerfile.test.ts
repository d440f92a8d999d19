// The Dockerfiles keep the release rules (digest-pinned base, build on $BUILDPLATFORM, nothing
// architecture-specific, the dependency layer before the sources, OCI labels with version and
// revision from build arguments), their labels are the release plan's, and the lint catches each
// rule broken.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { labelsWith, lintDockerfile, parseDockerfile } from './dockerfile.ts';
import { releasePlan } from './plan.ts';
import { readWorkspace } from './workspace.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const decided = releasePlan(readWorkspace(root, 'b'.repeat(40)));
if ('errors' in decided) throw new Error(decided.errors.join('\n'));
const plan = decided.plan;
const read = (p: string) => readFileSync(join(root, p), 'utf8');

const GOOD = `# syntax=docker/dockerfile:1
ARG NODE_IMAGE=node:24.18.0-alpine3.23@sha256:${'1'.repeat(64)}
FROM --platform=$BUILDPLATFORM \${NODE_IMAGE} AS build
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --offline && pnpm -r run build
FROM \${NODE_IMAGE}
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="t" \\
      org.opencontainers.image.description="d e" \\
      org.opencontainers.image.licenses="Apache-2.0" \\
      org.opencontainers.image.source="https://example.com/x" \\
      org.opencontainers.image.version="\${VERSION}" \\
      org.opencontainers.image.revision="\${REVISION}"
COPY --from=build /out /app
`;

describe('the Dockerfiles of the release', () => {
  it('one per image of the plan, each following every rule', () => {
    expect(plan.images.map((i) => i.dockerfile)).toEqual([
      'packages/controller/Dockerfile',
      'packages/webhook/Dockerfile',
      'packages/cli/Dockerfile',
    ]);
    for (const i of plan.images) expect(lintDockerfile(read(i.dockerfile)), i.dockerfile).toEqual([]);
  });

  it("label each image with the plan's labels once the workflow passes the plan's build arguments", () => {
    for (const i of plan.images) {
      expect(labelsWith(read(i.dockerfile), i.buildArgs), i.dockerfile).toEqual(i.labels);
    }
  });

  it('share one pinned base image', () => {
    const bases = new Set(plan.images.map((i) => parseDockerfile(read(i.dockerfile)).stages.at(-1)!.image));
    expect(bases.size).toBe(1);
    expect([...bases][0]).toMatch(/^node:24\.\d+\.\d+-alpine[\d.]*@sha256:[0-9a-f]{64}$/);
  });
});

describe('lintDockerfile', () => {
  it('passes a Dockerfile that follows the rules', () => {
    expect(lintDockerfile(GOOD)).toEqual([]);
  });

  it.each([
    [
      'a base by tag only',
      (s: string) => s.replace(/@sha256:1+/, ''),
      /base image node:24\.18\.0-alpine3\.23 is not pinned by digest/,
    ],
    [
      'an emulated build stage',
      (s: string) => s.replace('--platform=$BUILDPLATFORM ', ''),
      /\$BUILDPLATFORM/,
    ],
    [
      'an architecture in a RUN',
      (s: string) => s.replace('RUN pnpm fetch', 'RUN pnpm fetch && curl -o x https://e/x-linux-amd64'),
      /names an architecture \(amd64\)/,
    ],
    [
      'the sources copied before the dependencies are fetched',
      (s: string) => s.replace('COPY pnpm-lock.yaml pnpm-workspace.yaml ./\nRUN pnpm fetch\n', ''),
      /lockfile is not copied on its own/,
    ],
    [
      'no fetch between lockfile and sources',
      (s: string) => s.replace('RUN pnpm fetch\n', ''),
      /dependency layer is not cached/,
    ],
    [
      'a missing OCI label',
      (s: string) => s.replace(/ {6}org\.opencontainers\.image\.licenses="Apache-2\.0" \\\n/, ''),
      /no label org\.opencontainers\.image\.licenses/,
    ],
    [
      'a hard-coded version label',
      (s: string) => s.replace(/image\.version="\$\{VERSION\}"/, 'image.version="1.0.0"'),
      /image\.version is "1\.0\.0", want the build argument \$\{VERSION\}/,
    ],
    [
      'no REVISION build argument',
      (s: string) => s.replace('ARG REVISION=unknown\n', ''),
      /declares no ARG REVISION/,
    ],
  ])('finds %s', (_name, breakIt, problem) => {
    const bad = breakIt(GOOD);
    expect(bad).not.toBe(GOOD);
    const problems = lintDockerfile(bad);
    expect(
      problems.some((p) => problem.test(p)),
      problems.join('\n'),
    ).toBe(true);
  });
});
