import { expect, test } from 'vitest';
import { version } from './index.ts';

test('core resolves from source', () => {
  expect(version).toBe('0.1.0');
});
