// claimctl capture acquire|renew|complete|fail|release|retry NAME: the External backend's client
// side, on core's fenced holder operations. A stale token is ClaimSuperseded: exit 3, nothing written.
import {
  acquireCapture,
  type Capture,
  ClaimSuperseded,
  completeCapture,
  failCapture,
  releaseCapture,
  renewCapture,
  retryFailedCapture,
} from '@claimkit/core';
import { defineOptions } from '@claimkit/core/options';
import { oneOf, parseCommand, UsageError } from '../args.ts';
import type { Ctx } from '../context.ts';
import { CLAIMCTL } from '../program.ts';
import {
  CLUSTER_OPTIONS,
  connect,
  expectPositionals,
  flagsHelp,
  namespaceOf,
  showHelp,
  TEXT_OR_JSON_OPTIONS,
} from './common.ts';

/** The capture operations (the completion scripts offer them). */
export const OPS = ['acquire', 'renew', 'complete', 'fail', 'release', 'retry'] as const;

export const CAPTURE_OPTIONS = defineOptions({
  ...CLUSTER_OPTIONS,
  pod: { type: 'string', arg: 'NAME', help: 'acquire: the pod acquiring' },
  uid: { type: 'string', arg: 'UID', defaultText: 'read from the API', help: "acquire: that pod's UID" },
  token: { type: 'int', min: 1, help: 'the token acquire printed' },
  ref: { type: 'string', arg: 'REF', help: 'complete: the result reference' },
  error: { type: 'string', arg: 'MESSAGE', help: 'fail: why' },
  ...TEXT_OR_JSON_OPTIONS,
});

export const CAPTURE_HELP = `Hold and finish a Capture from the holder's side (External backend).

Usage:
  claimctl capture acquire NAME --pod POD [--uid UID]       acquire (or re-enter) for a pod; prints the token
  claimctl capture renew NAME --token N                     renew the lease
  claimctl capture complete NAME --token N --ref REF        record the result (fenced by the token)
  claimctl capture fail NAME --token N --error MESSAGE      record a failed attempt
  claimctl capture release NAME --token N                   give the claim up without a result
  claimctl capture retry NAME                               start a Failed capture over

A pod acquires for itself: --pod is its name, --uid its UID (read from the API when omitted; pass
it from the downward API to avoid the read). Writes with a token that is no longer current are
refused: the claim was taken over or closed.

Exit status: 0 done, 1 not acquired (held by a live pod, or the capture is closed), 2 error,
3 superseded token.

${flagsHelp(CAPTURE_OPTIONS)}`;

function summary(c: Capture): Record<string, unknown> {
  const s = c.status ?? {};
  return {
    name: c.metadata.name,
    namespace: c.metadata.namespace,
    phase: s.phase ?? 'Pending',
    epoch: s.epoch ?? 0,
    ...(s.claim ? { holder: s.claim.holder, token: s.claim.token, renewTime: s.claim.renewTime } : {}),
    ...(s.result ? { result: s.result } : {}),
    ...(s.lastError ? { lastError: s.lastError } : {}),
  };
}

export async function runCapture(ctx: Ctx, argv: string[]): Promise<number> {
  const line = parseCommand(CAPTURE_OPTIONS, argv);
  // Without an operation, the help says which there are (a usage error).
  if (!line || line.positionals.length === 0) return showHelp(ctx, CAPTURE_HELP, line ? 2 : 0);
  const { values: v } = line;
  const [opArg, name] = expectPositionals(line.positionals, 2, 2, 'claimctl capture OP NAME [flags]');
  const op = oneOf(opArg!, OPS, 'capture operation');
  const format = v.output;
  const need = <T>(flag: string, value: T | undefined): T => {
    if (value === undefined || value === '') throw new UsageError(`capture ${op} needs --${flag}`);
    return value;
  };
  const token = () => need('token', v.token);
  // Check every flag the operation needs before connecting.
  const args =
    op === 'acquire'
      ? { pod: need('pod', v.pod) }
      : op === 'renew' || op === 'release'
        ? { token: token() }
        : op === 'complete'
          ? { token: token(), ref: need('ref', v.ref) }
          : op === 'fail'
            ? { token: token(), error: need('error', v.error) }
            : {};
  const conn = await connect(ctx, v);
  const namespace = namespaceOf(v, conn)!;
  const key = { namespace, name: name! };
  const client = conn.client;
  const print = (text: string, c: Capture, extra: Record<string, unknown> = {}) => {
    ctx.out(format === 'json' ? JSON.stringify({ ...extra, capture: summary(c) }, null, 2) : text);
  };
  try {
    switch (op) {
      case 'acquire': {
        const podName = (args as { pod: string }).pod;
        const uid = v.uid ?? (await client.get('Pod', { namespace, name: podName })).metadata.uid ?? '';
        const { outcome, capture } = await acquireCapture(client, key, { name: podName, uid }, ctx.now);
        if (outcome.kind === 'held') {
          print(
            `capture ${name} is held by ${outcome.holder.name} (liveness ${outcome.liveness.state}); not acquired`,
            capture,
            { outcome: 'held' },
          );
          return 1;
        }
        if (outcome.kind === 'closed') {
          print(`capture ${name} is ${outcome.phase}; nothing to acquire`, capture, { outcome: 'closed' });
          return 1;
        }
        const tok = capture.status?.claim?.token;
        const how =
          outcome.kind === 'tookOver'
            ? `took over from ${outcome.previous.name} (${outcome.reason})`
            : outcome.kind === 'reentered'
              ? 're-entered'
              : 'acquired';
        print(`${how} capture ${name} for ${podName}: token ${tok}`, capture, {
          outcome: outcome.kind,
          token: tok,
        });
        return 0;
      }
      case 'renew': {
        const c = await renewCapture(client, key, (args as { token: number }).token, ctx.now);
        print(
          `renewed capture ${name} (token ${c.status?.claim?.token}) at ${c.status?.claim?.renewTime}`,
          c,
        );
        return 0;
      }
      case 'complete': {
        const a = args as { token: number; ref: string };
        const c = await completeCapture(client, key, a.token, a.ref, ctx.now);
        print(`capture ${name} is Captured: ${c.status?.result?.ref} (token ${c.status?.result?.token})`, c);
        return 0;
      }
      case 'fail': {
        const a = args as { token: number; error: string };
        const c = await failCapture(client, key, a.token, a.error);
        print(
          `capture ${name}: attempt ${c.status?.attempts} failed; phase ${c.status?.phase}${c.status?.phase === 'Failed' ? ` (maxAttempts reached; ${ctx.prog ?? CLAIMCTL} capture retry starts over)` : ''}`,
          c,
        );
        return 0;
      }
      case 'release': {
        const c = await releaseCapture(client, key, (args as { token: number }).token);
        print(`released capture ${name}; phase ${c.status?.phase}`, c);
        return 0;
      }
      case 'retry': {
        const c = await retryFailedCapture(client, key);
        print(`capture ${name} starts over; phase ${c.status?.phase}`, c);
        return 0;
      }
    }
  } catch (e) {
    if (e instanceof ClaimSuperseded) {
      ctx.err(`error: ${e.message}; nothing was written (capture ${namespace}/${name})`);
      return 3;
    }
    throw e;
  }
}
