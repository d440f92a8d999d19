// claimctl completion bash|zsh: completion scripts generated from the options tables the commands
// parse with (flag names, which take a value, their values and help), the command list help prints
// and the resource names `get` resolves, so a new flag or command is completed without editing a
// script. Object names are completed at TAB time by running `claimctl get KIND -o name` with the
// namespace and context the line names; for kubectl's completion of `kubectl claimkit`, `__complete`
// answers from the same tables in-process.
import type { OptionSpec, OptionTable } from '@claimkit/core/options';
import { GLOBAL_OPTIONS, parseCommand, UsageError } from './args.ts';
import { COMMAND_SUMMARY } from './command-list.ts';
import { CAPTURE_OPTIONS, OPS } from './commands/capture.ts';
import { CLAIM_OPS, CLAIM_OPTIONS } from './commands/claim.ts';
import { connect, NAMESPACED_OPTIONS, namespaceOf, showHelp } from './commands/common.ts';
import { DESCRIBE_OPTIONS } from './commands/describe.ts';
import { DOCTOR_OPTIONS } from './commands/doctor.ts';
import { fetchObjects, GET_OPTIONS } from './commands/get.ts';
import { SIMULATE_OPTIONS } from './commands/simulate.ts';
import type { Ctx } from './context.ts';
import { MANIFESTS_OPTIONS } from './manifests.ts';
import { CLAIMCTL, PLUGIN_BIN } from './program.ts';
import { RESOURCES, resolveResource } from './resources.ts';

export const SHELLS = ['bash', 'zsh'] as const;

/** A positional argument: one of fixed words, names of a kind, or names of the kind argument N gave. */
export type Positional = { words: readonly string[] } | { namesOf: string } | { namesOfArg: number };

export interface CommandCompletion {
  /** The table the command parses with: its flags, their help and values. */
  options: OptionTable;
  args: Positional[];
  /** The last positional repeats (`get pc a b c`). */
  repeat?: boolean;
}

/** Every spelling `get` and `describe` take for a kind: plural, singular, short name. */
export const KIND_WORDS = RESOURCES.flatMap((r) => [r.plural, r.singular, r.short]);

const kinds = { words: KIND_WORDS };
/** No command yet: only the global flags. */
const NO_COMMAND: CommandCompletion = { options: {}, args: [] };

/** What each command completes; `help` and `completion` complete words of their own. */
export const COMPLETIONS: Record<string, CommandCompletion> = {
  get: { options: GET_OPTIONS, args: [kinds, { namesOfArg: 0 }], repeat: true },
  describe: { options: DESCRIBE_OPTIONS, args: [kinds, { namesOfArg: 0 }], repeat: true },
  doctor: { options: DOCTOR_OPTIONS, args: [] },
  capture: { options: CAPTURE_OPTIONS, args: [{ words: OPS }, { namesOf: 'captures' }] },
  claim: { options: CLAIM_OPTIONS, args: [{ words: CLAIM_OPS }, { namesOf: 'podclaims' }] },
  simulate: { options: SIMULATE_OPTIONS, args: [] },
  manifests: { options: MANIFESTS_OPTIONS, args: [] },
  completion: { options: {}, args: [{ words: SHELLS }] },
  version: NO_COMMAND,
  help: { options: {}, args: [{ words: COMMAND_SUMMARY.map((c) => c.name) }] },
};

export const COMPLETION_HELP = `Print a shell completion script for claimctl's commands, flags, resource types and names.

Usage:
  claimctl completion bash|zsh

Load it in the current shell:
  source <(claimctl completion bash)
  source <(claimctl completion zsh)

Or install it once:
  claimctl completion bash > ~/.local/share/bash-completion/completions/claimctl
  claimctl completion zsh > "\${fpath[1]}/_claimctl"     # then start a new shell

Names of objects are completed by running the command itself ('get TYPE -o name', with the -n, -A,
--context and --kubeconfig the line has); namespaces and contexts with kubectl when it is on PATH.`;

export interface FlagInfo {
  long: string;
  short?: string;
  takesValue: boolean;
  description: string;
  /** The values the flag takes, where the table names them (an enum's, --components'). */
  values?: readonly string[];
}

// Core's parser knows -h/--help without a table entry (and its help calls it this).
const HELP_FLAG: FlagInfo = { long: 'help', short: 'h', takesValue: false, description: 'this help' };

/** A command's flags (-h and the global ones first), from its table. */
export function flagsOf(c: CommandCompletion): FlagInfo[] {
  return [
    HELP_FLAG,
    ...Object.entries<OptionSpec>({ ...GLOBAL_OPTIONS, ...c.options }).map(([long, o]) => ({
      long,
      ...(o.short ? { short: o.short } : {}),
      takesValue: o.type !== 'bool',
      // A menu line: the help without its parenthesized detail.
      description: o.help.replace(/\s*\(.*$/s, ''),
      ...(o.values ? { values: o.values } : {}),
    })),
  ];
}

const words = (xs: readonly string[]) => xs.join(' ');
const spellings = (f: FlagInfo) => [`--${f.long}`, ...(f.short ? [`-${f.short}`] : [])];
/** What `claimctl <TAB>` offers: the commands help lists, and `help`. */
const COMMAND_NAMES = Object.keys(COMPLETIONS);

function bashPositional(p: Positional): string {
  if ('words' in p) return `words='${words(p.words)}'`;
  if ('namesOf' in p) return `words=$(_claimctl_names ${p.namesOf} "\${cluster[@]}")`;
  return `words=$(_claimctl_names "\${args[${p.namesOfArg}]}" "\${cluster[@]}")`;
}

export function bashScript(): string {
  const flagCases = COMMAND_NAMES.map(
    (n) => `    ${n}) echo '${words(flagsOf(COMPLETIONS[n]!).flatMap(spellings))}' ;;`,
  );
  const valueFlagCases = COMMAND_NAMES.map(
    (n) =>
      `    ${n}) echo '${words(
        flagsOf(COMPLETIONS[n]!)
          .filter((f) => f.takesValue)
          .flatMap(spellings),
      )}' ;;`,
  );
  const valueCases = COMMAND_NAMES.flatMap((n) =>
    flagsOf(COMPLETIONS[n]!).flatMap((f) =>
      f.values
        ? [
            `    ${spellings(f)
              .map((s) => `'${n} ${s}'`)
              .join('|')}) echo '${words(f.values)}' ;;`,
          ]
        : [],
    ),
  );
  const argCases = COMMAND_NAMES.flatMap((n) => {
    const c = COMPLETIONS[n]!;
    const cases = c.args.map((p, i) => `    '${n} ${i}') ${bashPositional(p)} ;;`);
    const last = c.args.at(-1);
    if (c.repeat && last) cases.push(`    '${n} '*) ${bashPositional(last)} ;;`);
    return cases;
  });
  return `# bash completion for claimctl (and kubectl-claimkit), generated by 'claimctl completion bash'
# from its command and flag tables. Load it with:  source <(claimctl completion bash)

_claimctl_commands='${words(COMMAND_NAMES)}'

# Every flag of a command (the global ones included).
_claimctl_flags() {
  case $1 in
${flagCases.join('\n')}
    *) echo '${words(flagsOf(NO_COMMAND).flatMap(spellings))}' ;;
  esac
}

# The flags of a command that take a value (the next word is the value).
_claimctl_value_flags() {
  case $1 in
${valueFlagCases.join('\n')}
  esac
}

# The values of a flag that takes one of a fixed set: COMMAND FLAG.
_claimctl_flag_values() {
  case "$1 $2" in
${valueCases.join('\n')}
    *) return 1 ;;
  esac
}

# Names of the objects of a kind, read with claimctl itself: KIND [cluster flags of the line].
_claimctl_names() {
  local kind=$1
  shift
  [[ -n $kind ]] || return 0
  "$_claimctl_bin" get "$kind" -o name "$@" 2>/dev/null | sed 's|.*/||'
}

_claimctl() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}
  local _claimctl_bin=\${COMP_WORDS[0]} cmd='' w i skip=0 words='' values
  local -a args=() cluster=()
  # COMP_WORDBREAKS splits --flag=value into '--flag' '=' 'value'.
  if [[ $cur == '=' ]]; then
    cur=''
  elif [[ $prev == '=' ]]; then
    prev=\${COMP_WORDS[COMP_CWORD-2]}
  fi
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    if ((skip)); then
      [[ $w == '=' ]] || skip=0
      continue
    fi
    case $w in
      -n | --namespace | --context | --kubeconfig) cluster+=("$w" "\${COMP_WORDS[i + 1]}") ;;
      -A | --all-namespaces) cluster+=("$w") ;;
    esac
    case $w in
      -*) [[ " $(_claimctl_value_flags "$cmd") " == *" $w "* ]] && skip=1 ;;
      *) if [[ -z $cmd ]]; then cmd=$w; else args+=("$w"); fi ;;
    esac
  done
  COMPREPLY=()
  if [[ -n $cmd && $prev == -* && " $(_claimctl_value_flags "$cmd") " == *" $prev "* ]]; then
    if values=$(_claimctl_flag_values "$cmd" "$prev"); then
      COMPREPLY=($(compgen -W "$values" -- "$cur"))
    elif [[ $prev == --kubeconfig ]]; then
      COMPREPLY=($(compgen -f -- "$cur"))
    elif [[ $prev == -n || $prev == --namespace ]] && command -v kubectl >/dev/null 2>&1; then
      COMPREPLY=($(compgen -W "$(kubectl get namespaces -o name 2>/dev/null | sed 's|.*/||')" -- "$cur"))
    elif [[ $prev == --context ]] && command -v kubectl >/dev/null 2>&1; then
      COMPREPLY=($(compgen -W "$(kubectl config get-contexts -o name 2>/dev/null)" -- "$cur"))
    fi
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_claimctl_flags "$cmd")" -- "$cur"))
    return 0
  fi
  if [[ -z $cmd ]]; then
    COMPREPLY=($(compgen -W "$_claimctl_commands" -- "$cur"))
    return 0
  fi
  case "$cmd \${#args[@]}" in
${argCases.join('\n')}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}

complete -F _claimctl ${CLAIMCTL} ${PLUGIN_BIN}
`;
}

/** Text inside a zsh _arguments '[...]' description, in a single-quoted word. */
const zshDescription = (s: string) => s.replaceAll('[', '(').replaceAll(']', ')').replaceAll("'", "'\\''");

function zshFlagSpecs(c: CommandCompletion): string[] {
  return flagsOf(c).map((f) => {
    const desc = `[${zshDescription(f.description)}]`;
    let action = '';
    if (f.takesValue) {
      const what =
        f.values !== undefined
          ? `(${f.values.join(' ')})`
          : f.long === 'kubeconfig'
            ? '_files'
            : f.long === 'namespace'
              ? '_claimctl_namespaces'
              : f.long === 'context'
                ? '_claimctl_contexts'
                : ' ';
      action = `:${f.long}:${what}`;
    }
    const long = `--${f.long}${f.takesValue ? '=' : ''}`;
    if (!f.short) return `'${long}${desc}${action}'`;
    const short = `-${f.short}${f.takesValue ? '+' : ''}`;
    return `'(-${f.short} --${f.long})'{${short},${long}}'${desc}${action}'`;
  });
}

function zshPositional(p: Positional, i: number | '*'): string {
  const at = i === '*' ? '*' : String(i + 1);
  if ('words' in p) return `'${at}:arg:(${words(p.words)})'`;
  return `'${at}:name:->names${'namesOf' in p ? `-${p.namesOf}` : `-arg${p.namesOfArg + 1}`}'`;
}

export function zshScript(): string {
  const commandList = COMMAND_SUMMARY.map((c) => `    '${c.name}:${zshDescription(c.summary)}'`);
  const cases = COMMAND_NAMES.map((n) => {
    const c = COMPLETIONS[n]!;
    const specs = [...zshFlagSpecs(c), ...c.args.map((p, i) => zshPositional(p, i))];
    const last = c.args.at(-1);
    if (c.repeat && last) specs.push(zshPositional(last, '*'));
    return `    ${n})
      _arguments -C -s -S \\
        ${specs.join(' \\\n        ')} && ret=0
      ;;`;
  });
  return `#compdef ${CLAIMCTL} ${PLUGIN_BIN}
# zsh completion for claimctl (and kubectl-claimkit), generated by 'claimctl completion zsh' from its
# command and flag tables. Load it with:  source <(claimctl completion zsh)
# or save it as _claimctl in a directory of $fpath.

# Names of the objects of a kind, read with claimctl itself in the namespace and context of the line.
_claimctl_names() {
  local -a cluster found
  local k
  for k in -n --namespace --context --kubeconfig; do
    [[ -n \${opt_args[$k]} ]] && cluster+=($k \${opt_args[$k]})
  done
  (( \${+opt_args[-A]} || \${+opt_args[--all-namespaces]} )) && cluster+=(-A)
  found=(\${\${(f)"$(_call_program names $_claimctl_prog get $1 -o name $cluster 2>/dev/null)"}##*/})
  _describe -t names "$1" found
}

_claimctl_namespaces() {
  local -a found
  (( $+commands[kubectl] )) && found=(\${\${(f)"$(_call_program namespaces kubectl get namespaces -o name 2>/dev/null)"}##*/})
  _describe -t namespaces namespace found
}

_claimctl_contexts() {
  local -a found
  (( $+commands[kubectl] )) && found=(\${(f)"$(_call_program contexts kubectl config get-contexts -o name 2>/dev/null)"})
  _describe -t contexts context found
}

_claimctl() {
  local _claimctl_prog=$words[1] curcontext=$curcontext state state_descr line ret=1
  typeset -A opt_args
  local -a commands
  commands=(
${commandList.join('\n')}
  )
  _arguments -C \\
    ${zshFlagSpecs(NO_COMMAND).join(' \\\n    ')} \\
    '1:command:->command' \\
    '*::arg:->args' && ret=0
  case $state in
  command)
    _describe -t commands command commands && ret=0
    ;;
  args)
    curcontext=\${curcontext%:*:*}:claimctl-$words[1]:
    case $words[1] in
${cases.join('\n')}
    esac
    case $state in
    names-arg*) _claimctl_names \${line[\${state#names-arg}]} && ret=0 ;;
    names-*) _claimctl_names \${state#names-} && ret=0 ;;
    esac
    ;;
  esac
  return ret
}

if [[ $zsh_eval_context[-1] == loadautoload ]]; then
  _claimctl "$@"
else
  compdef _claimctl ${CLAIMCTL} ${PLUGIN_BIN}
fi
`;
}

/** Cobra's ShellCompDirective values, which kubectl expects from a plugin's completion. */
export const DIRECTIVE = { default: 0, noSpace: 2, noFiles: 4 } as const;

export interface Completed {
  /** Candidates, each `word` or `word\tdescription`. */
  words: string[];
  directive: number;
}

/** Lists the names of a kind's objects with the line's cluster flags (-n, -A, --context, --kubeconfig). */
export type NameLister = (kind: string, cluster: string[]) => Promise<string[]>;

/**
 * What to offer for the last of `args` (the word being typed, '' for a new one), from the same tables
 * as the scripts: the answer kubectl wants from kubectl_complete-claimkit for `kubectl claimkit ...`.
 */
export async function completeArgs(args: string[], names: NameLister): Promise<Completed> {
  const cur = args.at(-1) ?? '';
  const before = args.slice(0, -1);
  let cmd: string | undefined;
  const positional: string[] = [];
  const cluster: string[] = [];
  const valueFlags = (c: string | undefined) =>
    new Set(
      (c && COMPLETIONS[c] ? flagsOf(COMPLETIONS[c]) : []).filter((f) => f.takesValue).flatMap(spellings),
    );
  for (let i = 0; i < before.length; i++) {
    const w = before[i]!;
    const flag = w.split('=')[0]!;
    if (['-n', '--namespace', '--context', '--kubeconfig', '-A', '--all-namespaces'].includes(flag)) {
      cluster.push(w);
      if (!w.includes('=') && valueFlags(cmd).has(w) && i + 1 < before.length) cluster.push(before[i + 1]!);
    }
    if (w.startsWith('-')) {
      if (!w.includes('=') && valueFlags(cmd).has(w)) i++;
    } else if (cmd === undefined) cmd = w;
    else positional.push(w);
  }
  const offer = (ws: readonly string[], prefix = '', directive: number = DIRECTIVE.noFiles): Completed => ({
    words: ws.filter((w) => w.startsWith(cur.slice(prefix.length))).map((w) => `${prefix}${w}`),
    directive,
  });
  const c = cmd === undefined ? undefined : COMPLETIONS[cmd];
  const valuesOf = (flag: string): readonly string[] | undefined =>
    c ? flagsOf(c).find((x) => spellings(x).includes(flag))?.values : undefined;
  // --output=ya
  if (cur.startsWith('--') && cur.includes('=')) {
    const flag = cur.slice(0, cur.indexOf('='));
    return offer(valuesOf(flag) ?? [], `${flag}=`);
  }
  const prev = before.at(-1);
  if (prev?.startsWith('-') && !prev.includes('=') && valueFlags(cmd).has(prev)) {
    const vs = valuesOf(prev);
    if (vs) return offer(vs);
    return { words: [], directive: prev === '--kubeconfig' ? DIRECTIVE.default : DIRECTIVE.noFiles };
  }
  if (cur.startsWith('-')) {
    const fs = c ? flagsOf(c) : flagsOf(NO_COMMAND);
    return {
      words: fs
        .flatMap((f) => spellings(f).map((s) => `${s}\t${f.description}`))
        .filter((w) => w.startsWith(cur)),
      directive: DIRECTIVE.noFiles,
    };
  }
  if (!c) {
    const summaries = new Map(COMMAND_SUMMARY.map((x) => [x.name, x.summary]));
    return {
      words: COMMAND_NAMES.filter((n) => n.startsWith(cur)).map((n) =>
        summaries.has(n) ? `${n}\t${summaries.get(n)}` : n,
      ),
      directive: DIRECTIVE.noFiles,
    };
  }
  const p =
    positional.length < c.args.length ? c.args[positional.length] : c.repeat ? c.args.at(-1) : undefined;
  if (!p) return { words: [], directive: DIRECTIVE.noFiles };
  if ('words' in p) return offer(p.words);
  const kind = 'namesOf' in p ? p.namesOf : positional[p.namesOfArg];
  if (!kind) return { words: [], directive: DIRECTIVE.noFiles };
  return offer(await names(kind, cluster).catch(() => []));
}

export async function runCompletion(ctx: Ctx, argv: string[]): Promise<number> {
  const line = parseCommand({}, argv);
  if (!line) return showHelp(ctx, COMPLETION_HELP);
  if (line.positionals.length !== 1)
    throw new UsageError('want one shell: usage: claimctl completion bash|zsh');
  const shell = line.positionals[0]!;
  if (shell === 'bash') ctx.out(bashScript());
  else if (shell === 'zsh') ctx.out(zshScript());
  else throw new UsageError(`shell: want one of ${SHELLS.join('|')}, got ${JSON.stringify(shell)}`);
  return 0;
}

/**
 * `claimctl __complete ARGS... CUR`: cobra's protocol (candidates, then `:directive`), which kubectl
 * (1.26+) speaks with kubectl_complete-claimkit to complete `kubectl claimkit ...`. Names are listed
 * in-process with the line's cluster flags; a cluster that cannot be reached completes no names.
 */
export async function runComplete(ctx: Ctx, argv: string[]): Promise<number> {
  const r = await completeArgs(argv, async (kind, cluster) => {
    const line = parseCommand(NAMESPACED_OPTIONS, cluster);
    if (!line) return [];
    const conn = await connect(ctx, line.values);
    const objs = await fetchObjects(
      conn.client,
      resolveResource(kind),
      [],
      namespaceOf(line.values, conn),
      undefined,
    );
    return objs.map((o) => o.metadata.name);
  });
  ctx.out([...r.words, `:${r.directive}`].join('\n'));
  return 0;
}
