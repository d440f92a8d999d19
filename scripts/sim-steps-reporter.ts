// Adds up the simulator's soak tests (packages/core/src/sim/soak.test-helper.ts records each passed
// test's steps and seconds in its meta) into one line: total steps, steps/s per worker, violations.
// The files run in separate workers, so only the reporter sees all of them.
import type { Reporter, TestModule } from 'vitest/node';

export default class SimStepsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let steps = 0;
    let seconds = 0;
    let files = 0;
    let failed = 0;
    for (const m of testModules) {
      let counted = false;
      for (const t of m.children.allTests()) {
        const meta = t.meta() as { simSteps?: number; simSeconds?: number };
        if (t.result().state === 'failed' && m.moduleId.includes('/sim/soak')) failed++;
        if (typeof meta.simSteps !== 'number' || typeof meta.simSeconds !== 'number') continue;
        steps += meta.simSteps;
        seconds += meta.simSeconds;
        counted = true;
      }
      if (counted) files++;
    }
    if (files === 0 && failed === 0) return;
    const rate = seconds > 0 ? Math.round(steps / seconds) : 0;
    process.stdout.write(
      `\nsimulator: ${steps} steps in ${files} files, ${rate} steps/s per worker, ` +
        `${failed > 0 ? `${failed} soak test(s) FAILED (see above)` : '0 violations'}\n`,
    );
  }
}
