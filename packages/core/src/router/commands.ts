/**
 * Slash commands. Only the FIRST LINE of a new comment is read: `/name args`, name case-insensitive. The registry is
 * extensible: later phases add their commands with `registry.register(...)` or `createCommandRegistry([...])`.
 */
import type { Permission } from '../config/schema';
import type { PipelineStage } from '../pipeline/labels';
import type { PhaseName } from '../pipeline/phases';

export interface CommandSpec {
  /** Lower-case name without the slash, e.g. `ship-it`. */
  name: string;
  /** One line for /help. */
  description: string;
  /** Usage shown in /help, e.g. `/ship-it [direction]`. */
  usage: string;
  /** The lowest permission for this command. The effective minimum is the stricter of this and `commands.min_permission`. */
  minPermission: Permission;
  /** The phase the command starts, or null (e.g. /help only replies). */
  phase: string | null;
  /** Stages where the command makes sense (informational for /help and the phase; routing does not enforce it). */
  stages?: readonly PipelineStage[];
}

/** What a built-in command starts: a phase of the table (pipeline/phases.ts), or work that is no phase of an issue. */
export type BuiltinCommandTarget = PhaseName | 'retry' | 'doctor' | null;

export const BUILTIN_COMMANDS: readonly (CommandSpec & { phase: BuiltinCommandTarget })[] = [
  {
    name: 'triage',
    description: 'Triage this issue now (again), e.g. after editing it.',
    usage: '/triage',
    minPermission: 'write',
    phase: 'triage',
  },
  {
    name: 'groom',
    description:
      'Groom this issue: PM, engineer, QA and research agents check it is ready to plan; open questions go into the issue, big work is split into phase sub-issues.',
    usage: '/groom',
    minPermission: 'write',
    phase: 'groom',
  },
  {
    name: 'ship-it',
    description: 'Accept the shaped direction and move on to planning.',
    usage: '/ship-it [direction]',
    minPermission: 'write',
    phase: 'shape',
    stages: ['shape'],
  },
  {
    name: 'retry',
    description:
      "Retry the step that failed (resumes an issue from hydraflow-hitl), or start the phase an outsider's issue waits for.",
    usage: '/retry',
    minPermission: 'write',
    phase: 'retry',
    stages: ['hitl'],
  },
  {
    name: 'fix',
    description:
      "On HydraFlow's pull request (or its issue): the coding agent changes the pull request as you say, then HydraFlow reviews it again.",
    usage: '/fix <what to change>',
    minPermission: 'write',
    phase: 'feedback',
    stages: ['review'],
  },
  {
    name: 'doctor',
    description:
      "Check HydraFlow's setup in this repository (workflow, settings, keys, labels, branch protection) and reply with each problem and its fix.",
    usage: '/doctor',
    minPermission: 'write',
    phase: 'doctor',
  },
  {
    name: 'help',
    description: 'List the commands.',
    usage: '/help',
    minPermission: 'read',
    phase: null,
  },
];

export interface CommandRegistry {
  get(name: string): CommandSpec | undefined;
  list(): readonly CommandSpec[];
  register(spec: CommandSpec): void;
}

const NAME = /^[a-z][a-z0-9-]{0,31}$/;

export function createCommandRegistry(specs: readonly CommandSpec[] = BUILTIN_COMMANDS): CommandRegistry {
  const map = new Map<string, CommandSpec>();
  const registry: CommandRegistry = {
    get: (name) => map.get(name.toLowerCase()),
    list: () => [...map.values()],
    register(spec) {
      if (!NAME.test(spec.name)) throw new Error(`command name "${spec.name}" must match ${NAME}`);
      if (map.has(spec.name)) throw new Error(`command /${spec.name} is already registered`);
      map.set(spec.name, spec);
    },
  };
  for (const s of specs) registry.register(s);
  return registry;
}

export const defaultCommands: CommandRegistry = createCommandRegistry();

export interface ParsedCommand {
  /** Lower-cased name without the slash. */
  name: string;
  /** The rest of the first line, trimmed, at most 500 characters. */
  args: string;
}

/**
 * Parse `/name args` from the first line of a comment body. Anything after the first line is ignored, and so is a
 * first line that does not start with `/` (after leading spaces). `//x`, `/ x` and paths like `/usr/bin` with a
 * slash later in the name are not commands.
 */
export function parseCommand(body: string | null | undefined): ParsedCommand | undefined {
  if (typeof body !== 'string') return undefined;
  const first = (body.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '').trim();
  const m = /^\/([A-Za-z][A-Za-z0-9-]{0,31})(?=\s|$)\s*(.*)$/.exec(first);
  if (!m) return undefined;
  return { name: m[1]!.toLowerCase(), args: m[2]!.trim().slice(0, 500) };
}

/** Markdown for a /help reply (or the reply to an unknown command). */
export function renderHelp(registry: CommandRegistry = defaultCommands, unknown?: string): string {
  const lines = registry.list().map((c) => `| \`${c.usage}\` | ${c.description} |`);
  return [
    unknown
      ? `HydraFlow does not know \`/${unknown.replace(/[^a-z0-9-]/g, '')}\`. Commands (first line of a new comment):`
      : 'HydraFlow commands (first line of a new comment):',
    '',
    '| Command | What it does |',
    '|---|---|',
    ...lines,
  ].join('\n');
}
