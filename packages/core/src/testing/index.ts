// Test support for every package (`@claimkit/core/testing`): fixture builders, fake timers, model
// helpers, the invariant checks of DESIGN.md (a state's safety and convergence, the transition
// tracker), core's safety rules broken on purpose, and the admission policies' cases (POLICY_CASES,
// which the webhook's tests and the e2e suite replay).
export * from '../invariants/check.ts';
export * from '../invariants/claim-side.ts';
export * from '../invariants/pool-size.ts';
export * from '../invariants/tracker.ts';
export * from '../policies/cases.ts';
export * from './broken-rules.ts';
export * from './exposition.ts';
export * from './fake-timers.ts';
export * from './fixtures.ts';
export * from './gated-client.ts';
export * from './model-helpers.ts';
export * from './serving-pool.ts';
export * from './world.ts';
