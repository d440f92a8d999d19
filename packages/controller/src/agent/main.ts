#!/usr/bin/env node
// claimkit-capture-agent: the reference capture agent (Http backend protocol).
//   claimkit-capture-agent [--listen 0.0.0.0:8750] [--duration-ms 2000]
import { parseArgs } from 'node:util';
import { CaptureAgent } from './agent.ts';

function fail(msg: string): never {
  process.stderr.write(`claimkit-capture-agent: ${msg}\n`);
  process.exit(2);
}

let values: { listen?: string; 'duration-ms'?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      listen: { type: 'string', default: '0.0.0.0:8750' },
      'duration-ms': { type: 'string', default: '2000' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  }));
} catch (e) {
  fail(`${(e as Error).message.split('\n')[0]} (see --help)`);
}
if (values.help) {
  process.stdout.write('usage: claimkit-capture-agent [--listen host:port] [--duration-ms N]\n');
  process.exit(0);
}
const m = /^(.*):(\d+)$/.exec(values.listen ?? '');
if (!m) fail(`--listen: want host:port, got ${JSON.stringify(values.listen)}`);
const durationMs = Number(values['duration-ms']);
if (!Number.isFinite(durationMs) || durationMs < 0) fail('--duration-ms: want a number >= 0');
const agent = new CaptureAgent({
  durationMs,
  log: (l) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...l })}\n`),
});
const { url } = await agent.listen(Number(m[2]), m[1] || '0.0.0.0');
process.stderr.write(`${JSON.stringify({ msg: 'capture agent listening', url })}\n`);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    void agent.close().then(() => process.exit(0));
  });
}
