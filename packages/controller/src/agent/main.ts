#!/usr/bin/env node
// claimkit-capture-agent: the reference capture agent (Http backend protocol); one per node (the
// chart's DaemonSet), checkpointing holders' containers through its node's kubelet. Flags: --help.
import { FlagError } from '../flags.ts';
import { CaptureAgent } from './agent.ts';
import { bearerAuthenticator, inClusterTokenReview } from './auth.ts';
import { AGENT_USAGE, type AgentFlags, parseAgentFlags } from './flags.ts';
import { AgentStateError } from './state.ts';

const NAME = 'claimkit-capture-agent';

function fail(msg: string, code: number): never {
  process.stderr.write(`${NAME}: ${msg}\n`);
  process.exit(code);
}

/** One JSON object per line on stderr, in the controller's shape: time, level, msg, then the fields. */
function logLine(line: Record<string, unknown>): void {
  const { level, msg, ...fields } = line;
  const head = { time: new Date().toISOString(), level: level ?? 'info', msg: msg ?? '' };
  let text: string;
  try {
    text = JSON.stringify({ ...head, ...fields, ...head }, (_k, v) => (v instanceof Error ? v.message : v));
  } catch (e) {
    text = JSON.stringify({ ...head, logError: `fields not serialisable: ${(e as Error).message}` });
  }
  process.stderr.write(`${text}\n`);
}

let flags: AgentFlags & { help: boolean };
try {
  flags = parseAgentFlags(process.argv.slice(2));
} catch (e) {
  if (e instanceof FlagError) fail(`${e.message} (see --help)`, 2);
  throw e;
}
if (flags.help) {
  process.stdout.write(AGENT_USAGE);
  process.exit(0);
}

let agent: CaptureAgent;
try {
  agent = new CaptureAgent({
    stateDir: flags.stateDir,
    ...(flags.capture === 'sleep' ? { durationMs: flags.durationMs } : { kubelet: { ...flags.kubelet } }),
    log: logLine,
    ...(flags.allowedCallers.length > 0
      ? {
          authenticate: bearerAuthenticator({
            allowed: flags.allowedCallers,
            review: inClusterTokenReview(),
          }),
        }
      : {}),
  });
} catch (e) {
  if (e instanceof AgentStateError) fail(`${e.message} (--state-dir)`, 1);
  throw e;
}
let url: string;
try {
  ({ url } = await agent.listen(flags.listen.port, flags.listen.host));
} catch (e) {
  fail(`cannot listen on ${flags.listen.host}:${flags.listen.port} (--listen): ${(e as Error).message}`, 1);
}
logLine({
  level: 'info',
  msg: 'capture agent listening',
  url,
  capture: flags.capture,
  stateDir: flags.stateDir,
  allowedCallers: flags.allowedCallers.length > 0 ? flags.allowedCallers : 'anyone',
  ...(flags.capture === 'kubelet'
    ? {
        kubelet: `https://${flags.kubelet.host}:${flags.kubelet.port}`,
        node: flags.kubelet.nodeName,
        tlsVerify: flags.kubelet.insecureTLS ? 'off' : (flags.kubelet.caFile ?? 'system CAs'),
        checkpointDir: flags.kubelet.checkpointDir,
        storeDir: flags.kubelet.storeDir,
      }
    : { durationMs: flags.durationMs }),
});
if (flags.allowedCallers.length === 0)
  logLine({
    level: 'warn',
    msg: 'no --allowed-callers: anyone who reaches this port may ask for checkpoints of this node’s pods',
  });
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    logLine({ level: 'info', msg: 'shutting down', signal: sig });
    void agent.close().then(() => process.exit(0));
  });
}
