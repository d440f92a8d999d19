#!/usr/bin/env node
// claimkit-capture-agent: the reference capture agent (Http backend protocol); one per node (the
// chart's DaemonSet), checkpointing holders' containers through its node's kubelet. Flags: --help.
import { configOrExit } from '@claimkit/core/options';
import { jsonLogger } from '../log.ts';
import { agentLogTo, CaptureAgent } from './agent.ts';
import { bearerAuthenticator, inClusterTokenReview } from './auth.ts';
import { type AgentFlags, agentStartup } from './flags.ts';
import { AgentStateError } from './state.ts';

const NAME = 'claimkit-capture-agent';

function fail(msg: string, code: number): never {
  process.stderr.write(`${NAME}: ${msg}\n`);
  process.exit(code);
}

const flags: AgentFlags = configOrExit(agentStartup(process.argv.slice(2), process.env), process);
// The controller's logger (core's one shape: JSON lines of ts, level, msg and fields) on stderr.
const log = jsonLogger(flags.logLevel, undefined, undefined, flags.logFormat).with({ logger: NAME });
const logLine = agentLogTo(log);

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
        ...(flags.kubelet.image
          ? {
              imageRepository: flags.kubelet.image.repository,
              registry: `${flags.kubelet.image.plainHTTP ? 'http' : 'https'}://${flags.kubelet.image.repository.split('/')[0]}`,
              registryTLSVerify: flags.kubelet.image.plainHTTP
                ? 'n/a (http)'
                : flags.kubelet.image.insecureTLS
                  ? 'off'
                  : (flags.kubelet.image.caFile ?? 'system CAs'),
              registryAuth: flags.kubelet.image.authFile ?? 'anonymous',
            }
          : { imageRepository: 'none (checkpoint:// refs)' }),
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
