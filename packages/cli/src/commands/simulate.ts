// claimctl simulate: core's deterministic simulator; a violation prints the seed and shrunk trace.
import { formatTrace, formatViolations, SIM_DEFAULTS, simulate } from '@claimkit/core/sim';
import { type FlagSpecs, int, num, oneOf, type Parsed, parseFlags, str } from '../args.ts';
import type { Ctx } from '../context.ts';
import { asProgram } from '../program.ts';
import { expectPositionals } from './common.ts';

export const SIMULATE_HELP = `Run core's deterministic simulator: controller replicas, faults, pod churn, migrations,
scale-in and legacy writers, checking every invariant of DESIGN.md after each step.

Usage:
  claimctl simulate [--seed N] [--steps N] [--replicas N] [--faults RATE] [-o text|json]

On a violation it prints the seed and the shrunk trace (replay with the same --seed and --steps)
and exits 1.

Flags:
      --seed N              random seed (default: random, printed)
      --steps N             actions to run (default 2000)
      --replicas N          controller replicas running at once (default ${SIM_DEFAULTS.replicas})
      --faults RATE         probability of an API fault per step, 0..1 (default ${SIM_DEFAULTS.faultRate})
  -o, --output FORMAT       text (default) or json`;

export const SIMULATE_FLAGS: FlagSpecs = {
  seed: { type: 'string' },
  steps: { type: 'string' },
  replicas: { type: 'string' },
  faults: { type: 'string' },
  output: { short: 'o', type: 'string' },
};

export async function runSimulate(ctx: Ctx, argv: string[]): Promise<number> {
  const p: Parsed = parseFlags(argv, SIMULATE_FLAGS);
  if (p.flags.help) {
    ctx.out(asProgram(SIMULATE_HELP, ctx.prog));
    return 0;
  }
  expectPositionals(p, 0, 0, 'claimctl simulate [flags]');
  const seed = int(p, 'seed', Math.floor(Math.random() * 2 ** 31));
  const steps = int(p, 'steps', 2000, 1);
  const replicas = int(p, 'replicas', SIM_DEFAULTS.replicas, 1);
  const faultRate = num(p, 'faults', SIM_DEFAULTS.faultRate, 0, 1);
  const format = oneOf(str(p, 'output') ?? 'text', ['text', 'json'] as const, '--output');
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
      `shrunk trace (replay: ${ctx.prog ?? 'claimctl'} simulate --seed ${seed} --steps ${steps} --replicas ${replicas} --faults ${faultRate}):`,
      formatTrace(seed, res.trace),
    ].join('\n'),
  );
  return 1;
}
