import { describe, it } from 'vitest';
import { schemaModelOptions } from '../schema/validate.ts';
import { ApiModel } from './api-model.ts';
import { conformanceCases, conformanceEnv } from './conformance.ts';

// The in-memory model must pass the same cases apps/e2e runs against a real kube-apiserver.
describe('API-model conformance', () => {
  for (const c of conformanceCases) {
    it(c.name, async () => {
      const model = new ApiModel(schemaModelOptions());
      let t = 0;
      // The model is synchronous: `eventually` only needs a few retries, no timers.
      const env = conformanceEnv({ sleep: async () => void t++, now: () => t, timeoutMs: 3 });
      await c.run(model, 'conformance', env);
    });
  }
});
