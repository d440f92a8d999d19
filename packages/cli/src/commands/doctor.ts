// claimctl doctor: finds every symptom of the seeds and repairs what core knows how to repair.
import type { Write } from '@claimkit/core';
import {
  CHECKS,
  DEFAULT_STUCK_AFTER_MS,
  type DoctorRun,
  type Finding,
  runDoctor,
} from '@claimkit/core/doctor';
import { defineOptions } from '@claimkit/core/options';
import { parseCommand, UsageError } from '../args.ts';
import type { Ctx } from '../context.ts';
import type { Style } from '../output.ts';
import {
  connect,
  expectPositionals,
  flagsHelp,
  NAMESPACED_OPTIONS,
  namespaceOf,
  showHelp,
  TEXT_OR_JSON_OPTIONS,
} from './common.ts';

export const DOCTOR_OPTIONS = defineOptions({
  ...NAMESPACED_OPTIONS,
  ...TEXT_OR_JSON_OPTIONS,
  fix: { type: 'bool', help: 'repair what can be repaired' },
  'dry-run': { type: 'bool', help: 'with --fix: print the writes, change nothing' },
  'stuck-after': {
    type: 'duration',
    default: DEFAULT_STUCK_AFTER_MS,
    help: 'when a deletion, migration or blocked scale-in counts as stuck',
  },
});

export const DOCTOR_HELP = `Find claimkit problems in a live cluster and optionally repair them.

Usage:
  claimctl doctor [-n NS | -A] [-o text|json] [--fix [--dry-run]] [--stuck-after DURATION]

Checks (stable codes):
${Object.entries(CHECKS)
  .map(([code, c]) => `  ${code}  ${c.name.padEnd(24)}${c.fixable ? '' : '(report only)'}`)
  .join('\n')}

--fix applies core's repair decisions; every write carries the resourceVersion/UID it was planned
from, so a concurrent change makes it fail instead of overwriting. Repairs run in rounds (read,
plan, write) until nothing fixable is left. --dry-run prints the writes of the first round.

Exit status: 0 healthy (or everything repaired), 1 problems remain, 2 error.

${flagsHelp(DOCTOR_OPTIONS)}`;

function subject(f: Finding): string {
  return f.objects[0] ?? '';
}

export function formatFinding(f: Finding, st: Style): string {
  const code = f.severity === 'Info' ? `${st.yellow(f.code)} (info)` : st.red(f.code);
  return `${code} ${st.bold(f.name)} ${subject(f)}: ${f.message}${
    f.objects.length > 1 ? st.dim(` [${f.objects.slice(1).join(', ')}]`) : ''
  }`;
}

export function formatWrite(w: Write): string {
  switch (w.op) {
    case 'create':
    case 'update':
    case 'updateStatus': {
      const m = w.object.metadata;
      const target = `${w.object.kind} ${m.namespace ?? ''}/${m.name}`;
      return `${w.op} ${target} (resourceVersion ${m.resourceVersion ?? '-'}): ${w.why}`;
    }
    case 'patch':
    case 'patchStatus': {
      const pre = w.precondition
        ? ` (${[w.precondition.resourceVersion && `resourceVersion ${w.precondition.resourceVersion}`, w.precondition.uid && `uid ${w.precondition.uid}`].filter(Boolean).join(', ')})`
        : '';
      return `${w.op} ${w.kind} ${w.key.namespace}/${w.key.name}${pre} ${JSON.stringify(w.patch)}: ${w.why}`;
    }
    case 'delete': {
      const pre = w.preconditions?.resourceVersion
        ? ` (resourceVersion ${w.preconditions.resourceVersion})`
        : '';
      return `delete ${w.kind} ${w.key.namespace}/${w.key.name}${pre}: ${w.why}`;
    }
  }
}

export function formatRun(run: DoctorRun, opts: { fix: boolean; dryRun: boolean }, st: Style): string {
  const lines: string[] = [];
  if (run.findings.length === 0) return st.green('no problems found');
  for (const f of run.findings) lines.push(formatFinding(f, st));
  const fixable = run.findings.filter((f) => f.fixable).length;
  lines.push('', `${run.findings.length} problem(s) found, ${fixable} fixable`);
  if (!opts.fix) {
    if (fixable > 0) lines.push('run with --fix to repair (add --dry-run to see the writes first)');
    return lines.join('\n');
  }
  if (opts.dryRun) {
    lines.push('', 'dry run: these writes would be made (first round; later rounds re-read and re-plan):');
    for (const r of run.rounds[0] ?? []) {
      lines.push(`  ${r.finding.code} ${subject(r.finding)}`);
      for (const w of r.writes) lines.push(`    ${formatWrite(w)}`);
    }
    return lines.join('\n');
  }
  run.rounds.forEach((round, i) => {
    lines.push('', `round ${i + 1}:`);
    for (const r of round) {
      const ok = !r.failed;
      lines.push(
        `  ${ok ? st.green('fixed') : st.yellow('not fixed')} ${r.finding.code} ${subject(r.finding)}`,
      );
      r.writes.slice(0, r.applied).forEach((w) => {
        lines.push(`    ${formatWrite(w)}`);
      });
      if (r.failed)
        lines.push(`    ${st.yellow(`failed: ${r.failed.error.reason}: ${r.failed.error.message}`)}`);
    }
  });
  lines.push('');
  if (run.remaining.length === 0) lines.push(st.green('all problems repaired'));
  else {
    lines.push(`${run.remaining.length} problem(s) remain:`);
    for (const f of run.remaining) lines.push(`  ${formatFinding(f, st)}`);
  }
  return lines.join('\n');
}

export async function runDoctorCommand(ctx: Ctx, argv: string[]): Promise<number> {
  const line = parseCommand(DOCTOR_OPTIONS, argv);
  if (!line) return showHelp(ctx, DOCTOR_HELP);
  const { values: v } = line;
  expectPositionals(line.positionals, 0, 0, 'claimctl doctor [flags]');
  const { output: format, fix, 'dry-run': dryRun, 'stuck-after': stuckAfterMs } = v;
  if (dryRun && !fix) throw new UsageError('--dry-run needs --fix');
  const conn = await connect(ctx, v);
  const namespace = namespaceOf(v, conn);
  const run = await runDoctor(conn.client, {
    ...(namespace !== undefined ? { namespace } : {}),
    now: ctx.now,
    fix,
    dryRun,
    stuckAfterMs,
    ...(conn.recorder ? { recorder: conn.recorder } : {}),
  });
  if (format === 'json') {
    ctx.out(
      JSON.stringify(
        {
          namespace: namespace ?? null,
          findings: run.findings,
          rounds: run.rounds.map((round) =>
            round.map((r) => ({
              code: r.finding.code,
              object: subject(r.finding),
              writes: r.writes,
              applied: r.applied,
              ...(r.failed
                ? { failed: { reason: r.failed.error.reason, message: r.failed.error.message } }
                : {}),
            })),
          ),
          remaining: fix && !dryRun ? run.remaining : run.findings,
        },
        null,
        2,
      ),
    );
  } else ctx.out(formatRun(run, { fix, dryRun }, ctx.style));
  const left = fix && !dryRun ? run.remaining : run.findings;
  // Info findings (a rollout waiting for releases) are reported, not failed on.
  return left.every((f) => f.severity === 'Info') ? 0 : 1;
}
