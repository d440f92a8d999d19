// The deterministic simulator: several controller replicas (all active, no leader election) run
// core's reconcilers against the in-memory API model while pods die, are replaced under the same
// name, migrations are requested, claim sets scale, capture backends succeed/fail/hang, the API
// injects faults and caches lag. Safety invariants are checked after every step, convergence
// invariants after every quiet period. A violation comes with the seed and a shrunk, replayable trace.
//
// This file is the simulator's surface; each concern has its own file: options.ts (what a run is
// asked and reports), cluster.ts (the simulated cluster), world.ts (model, agent, tracker, routing
// and controller replicas), actions.ts (the actions and how a seed draws them), apply.ts (applying
// one), quiesce.ts and check-step.ts (quiet periods, what is checked after each action), run.ts
// (runTrace, simulate, shrink, formatting) and scenarios.ts (a world driven by hand).
export type { Action } from './actions.ts';
export { SIM_DEFAULTS, type SimOptions, type SimResult, type SimViolation } from './options.ts';
export { formatTrace, formatViolations, runTrace, simulate } from './run.ts';
export { quietViolations, reconcileNow, settle, step } from './scenarios.ts';
export { openWorld, World } from './world.ts';
