// The Dockerfiles' release rules, checked from their text (no Docker needed): every base image
// pinned by digest, the build stage on the builder's platform and nothing architecture-specific
// (multi-arch), the dependency layer before the sources (cached until the lockfile changes), and
// the final image labelled with the OCI annotations, version and revision from build arguments.

export interface Instruction {
  /** Upper-case keyword: FROM, RUN, COPY, ARG, LABEL, ... */
  op: string;
  /** The rest of the instruction, continuation lines joined. */
  args: string;
  line: number;
}

export interface Stage {
  /** The FROM's image as written (may name an ARG). */
  from: string;
  /** The FROM's image with global ARG defaults substituted. */
  image: string;
  platform?: string;
  name?: string;
  instructions: Instruction[];
}

export interface ParsedDockerfile {
  /** ARGs before the first FROM, with their defaults. */
  globalArgs: Record<string, string>;
  stages: Stage[];
}

/** The instructions of a Dockerfile: comments dropped, `\` continuations joined. */
export function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let line = lines[i]!;
    if (/^\s*(#|$)/.test(line)) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) {
      i++;
      const next = lines[i]!;
      if (/^\s*#/.test(next)) continue;
      line = `${line.slice(0, -1)} ${next.trim()}`;
    }
    const m = /^\s*(\w+)\s*(.*)$/.exec(line);
    if (m) out.push({ op: m[1]!.toUpperCase(), args: m[2]!.trim(), line: start + 1 });
  }
  return out;
}

const substitute = (s: string, args: Record<string, string>) =>
  s.replace(
    /\$\{(\w+)\}|\$(\w+)/g,
    (m, a: string | undefined, b: string | undefined) => args[a ?? b ?? ''] ?? m,
  );

/** `KEY=value` pairs of an ARG, ENV or LABEL instruction (values may be double-quoted). */
export function keyValues(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of args.matchAll(/([\w.-]+)(?:=("(?:[^"\\]|\\.)*"|\S*))?/g)) {
    const raw = m[2] ?? '';
    out[m[1]!] = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
  }
  return out;
}

export function parseDockerfile(text: string): ParsedDockerfile {
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const ins of instructions(text)) {
    if (ins.op === 'FROM') {
      const m = /^(?:--platform=(\S+)\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      const from = m?.[2] ?? ins.args;
      stages.push({
        from,
        image: substitute(from, globalArgs),
        ...(m?.[1] ? { platform: m[1] } : {}),
        ...(m?.[3] ? { name: m[3] } : {}),
        instructions: [],
      });
    } else if (stages.length === 0) {
      if (ins.op === 'ARG') Object.assign(globalArgs, keyValues(ins.args));
    } else {
      stages.at(-1)!.instructions.push(ins);
    }
  }
  return { globalArgs, stages };
}

/** The final stage's labels, with `${ARG}` left as written. */
export function finalLabels(d: ParsedDockerfile): Record<string, string> {
  const last = d.stages.at(-1);
  return Object.assign(
    {},
    ...(last?.instructions.filter((i) => i.op === 'LABEL').map((i) => keyValues(i.args)) ?? []),
  ) as Record<string, string>;
}

/** The final stage's ARGs with their defaults. */
export function finalArgs(d: ParsedDockerfile): Record<string, string> {
  const last = d.stages.at(-1);
  return Object.assign(
    {},
    ...(last?.instructions.filter((i) => i.op === 'ARG').map((i) => keyValues(i.args)) ?? []),
  ) as Record<string, string>;
}

export const OCI_LABELS = ['title', 'description', 'licenses', 'source', 'version', 'revision'].map(
  (k) => `org.opencontainers.image.${k}`,
);

const DIGEST_PINNED = /^[\w./-]+(:[\w.-]+)?@sha256:[0-9a-f]{64}$/;
const ARCH_SPECIFIC = /\b(uname\s+-m|amd64|x86_64|arm64|aarch64|armv7)\b/;

/** Every rule the Dockerfile breaks, each with its line; empty when it follows them all. */
export function lintDockerfile(text: string): string[] {
  const d = parseDockerfile(text);
  const problems: string[] = [];
  if (d.stages.length < 2) problems.push('want a build stage and a runtime stage');
  const names = new Set(d.stages.flatMap((s) => (s.name ? [s.name] : [])));
  for (const s of d.stages) {
    if (names.has(s.image)) continue;
    if (!DIGEST_PINNED.test(s.image))
      problems.push(`FROM ${s.from}: base image ${s.image} is not pinned by digest`);
  }
  const build = d.stages.slice(0, -1);
  const final = d.stages.at(-1);
  for (const s of build) {
    if (s.platform !== '$BUILDPLATFORM')
      problems.push(
        `FROM ${s.from}${s.name ? ` AS ${s.name}` : ''}: a build stage runs on --platform=$BUILDPLATFORM`,
      );
  }
  if (final?.platform)
    problems.push(`FROM ${final.from}: the runtime stage is the target platform's (no --platform)`);
  for (const s of d.stages) {
    for (const i of s.instructions) {
      if (i.op === 'RUN' && ARCH_SPECIFIC.test(i.args))
        problems.push(
          `line ${i.line}: RUN names an architecture (${ARCH_SPECIFIC.exec(i.args)![0]}): not multi-arch`,
        );
    }
  }
  // The dependency layer: the lockfile is copied alone, then fetched or installed, before the sources.
  const main = build.at(-1);
  if (main) {
    const ins = main.instructions;
    const sources = ins.findIndex((i) => i.op === 'COPY' && /(^|\s)\.\s+\.$/.test(i.args));
    const lock = ins.findIndex(
      (i) => i.op === 'COPY' && /pnpm-lock\.yaml/.test(i.args) && !/(^|\s)\.\s/.test(i.args),
    );
    const fetch = ins.findIndex((i, n) => n > lock && i.op === 'RUN' && /pnpm (fetch|install)/.test(i.args));
    if (sources < 0) problems.push('the build stage does not copy the sources (COPY . .)');
    else if (lock < 0 || lock > sources)
      problems.push('the lockfile is not copied on its own before the sources');
    else if (fetch < 0 || fetch > sources)
      problems.push(
        'no `pnpm fetch` (or install) between the lockfile and the sources: the dependency layer is not cached',
      );
  }
  if (final) {
    const labels = finalLabels(d);
    const args = finalArgs(d);
    for (const k of OCI_LABELS) if (!labels[k]) problems.push(`the image has no label ${k}`);
    for (const [k, arg] of [
      ['org.opencontainers.image.version', 'VERSION'],
      ['org.opencontainers.image.revision', 'REVISION'],
    ] as const) {
      if (labels[k] !== undefined && labels[k] !== `\${${arg}}`)
        problems.push(`label ${k} is ${JSON.stringify(labels[k])}, want the build argument \${${arg}}`);
      if (!(arg in args)) problems.push(`the runtime stage declares no ARG ${arg}`);
    }
  }
  return problems;
}

/** The final image's labels once the build arguments are given (ARG defaults for the rest). */
export function labelsWith(text: string, buildArgs: Record<string, string>): Record<string, string> {
  const d = parseDockerfile(text);
  const args = { ...finalArgs(d), ...buildArgs };
  return Object.fromEntries(Object.entries(finalLabels(d)).map(([k, v]) => [k, substitute(v, args)]));
}
