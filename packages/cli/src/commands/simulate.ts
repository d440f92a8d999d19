// claimctl simulate: core's deterministic simulator; a violation prints the seed and shrunk trace.
import { defineOptions } from '@claimkit/core/options';
import { formatTrace, formatViolations, SIM_DEFAULTS, simulate } from '@claimkit/core/sim';
import { parseCommand } from '../args.ts';
import type { Ctx } from '../context.ts';
import { CLAIMCTL } from '../program.ts';
import { expectPositionals, flagsHelp, showHelp, TEXT_OR_JSON_OPTIONS } from './common.ts';

const faultRateProblem = (s: string) => {
  const n = Number(s);
  return s.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1
    ? `want a number from 0 to 1, got ${JSON.stringify(s)}`
    : undefined;
};

export const SIMULATE_OPTIONS = defineOptions({
  seed: { type: 'int', min: 0, defaultText: 'random, printed', help: 'random seed' },
  steps: { type: 'int', min: 1, default: 2000, help: 'actions to run' },
  replicas: {
    type: 'int',
    min: 1,
    default: SIM_DEFAULTS.replicas,
    help: 'controller replicas running at once',
  },
  // A string, as core's tables have no fractional type; the run takes Number() of it.
  faults: {
    type: 'string',
    arg: 'RATE',
    default: String(SIM_DEFAULTS.faultRate),
    validate: faultRateProblem,
    help: 'probability of an API fault per step, 0..1',
  },
  ...TEXT_OR_JSON_OPTIONS,
});

export const SIMULATE_HELP = `Run core's deterministic simulator: controller replicas, faults, pod churn, migrations,
scale-in and legacy writers, checking every invariant of DESIGN.md after each step.

Usage:
  claimctl simulate [--seed N] [--steps N] [--replicas N] [--faults RATE] [-o text|json]

On a violation it prints the seed and the shrunk trace (replay with the same --seed and --steps)
and exits 1.

${flagsHelp(SIMULATE_OPTIONS)}`;

export async function runSimulate(ctx: Ctx, argv: string[]): Promise<number> {
  const line = parseCommand(SIMULATE_OPTIONS, argv);
  if (!line) return showHelp(ctx, SIMULATE_HELP);
  expectPositionals(line.positionals, 0, 0, 'claimctl simulate [flags]');
  const { steps, replicas, output: format } = line.values;
  const seed = line.values.seed ?? Math.floor(Math.random() * 2 ** 31);
  const faultRate = Number(line.values.faults);
  const t0 = Date.now();
  const res = await simulate({ seed, steps, replicas, faultRate });
  const ms = Date.now() - t0;
  if (format === 'json') {
    ctx.out(JSON.stringify({ ...res, replicas, faultRate, ms }, null, 2));
    return res.violations.length === 0 ? 0 : 1;
  }
  const stats = Object.entries(res.stats)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  if (res.violations.length === 0) {
    ctx.out(
      `${ctx.style.green('ok')}: seed ${seed}, ${steps} steps, ${replicas} replica(s), fault rate ${faultRate}: no invariant violated (${ms} ms)${stats ? `\n${stats}` : ''}`,
    );
    return 0;
  }
  ctx.out(
    [
      `${ctx.style.red('violation')}: seed ${seed}, ${steps} steps, ${replicas} replica(s), fault rate ${faultRate}`,
      formatViolations(res.violations),
      '',
      `shrunk trace (replay: ${ctx.prog ?? CLAIMCTL} simulate --seed ${seed} --steps ${steps} --replicas ${replicas} --faults ${faultRate}):`,
      formatTrace(seed, res.trace),
    ].join('\n'),
  );
  return 1;
}
