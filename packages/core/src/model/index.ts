// The in-memory Kubernetes API model (`@claimkit/core/model`): what unit tests, the simulator and
// the CLI's tests run against instead of a cluster. Writes persist, watches deliver, resourceVersions
// fence; admission, faults and lagging caches as the real server shows them; an in-memory capture
// agent; and the conformance cases that hold the model and the real API server to the same answers.

export { schemaModelOptions } from '../schema/validate.ts';
export * from './admission.ts';
export * from './api-model.ts';
export * from './cache-view.ts';
export * from './capture-agent.ts';
export * from './clock.ts';
export * from './conformance.ts';
export * from './faults.ts';
