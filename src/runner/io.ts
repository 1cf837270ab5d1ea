/**
 * The slice of the Actions runner protocol HydraFlow uses: inputs, outputs, step summary, log commands, masks.
 * Written here rather than imported from @actions/core because that package alone takes ~165 ms to load (it pulls
 * an HTTP client for OIDC), which would eat most of the cold-start budget of an event that needs no work.
 * Bound to an environment so tests can run several actions in one process.
 */
import { appendFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { EOL } from 'node:os';

/** A command's data (GitHub's rules): it stays on the command's one line. */
function escapeData(value: string): string {
  return value.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/**
 * Text for the log that cannot issue a workflow command. The runner reads the step's output line by line (`\n`, `\r`
 * and `\r\n` end a line) and runs a line as a command when, after its leading whitespace (.NET's, which counts NEL
 * too), it starts with `::`, or when it holds `##[` anywhere (the older syntax, still parsed). Such a line keeps its
 * text but not its syntax: `::` becomes `: :` and `##[` becomes `## [`. Multi-line text is escaped line by line,
 * because a model's or a user's text can put a command on any line (`::add-mask::`, `::stop-commands::`, ...).
 */
export function escapeLogText(text: string): string {
  return text
    .split(/(\r\n|\r|\n)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/^([\s\u0085]*):(?=:)/, '$1: ').replace(/##\[/g, '## [')))
    .join('');
}

/** An input as the runner passes it (`INPUT_<NAME>`, spaces to underscores, upper-cased, hyphens kept), trimmed. */
export function getInput(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return (env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] ?? '').trim();
}

export interface RunnerIO {
  setOutput(name: string, value: string): void;
  /** Appends markdown to the job summary (shown on the run's page). */
  appendSummary(markdown: string): void;
  mask(secret: string): void;
  info(message: string): void;
  notice(message: string): void;
  warning(message: string): void;
  error(message: string): void;
}

export function createRunnerIO(
  env: NodeJS.ProcessEnv = process.env,
  write: (text: string) => void = (text) => process.stdout.write(text),
): RunnerIO {
  const command = (name: string, message: string) => write(`::${name}::${escapeData(message)}${EOL}`);
  const appendTo = (variable: string, text: string): boolean => {
    const path = env[variable];
    if (!path) return false;
    appendFileSync(path, text, 'utf8');
    return true;
  };
  return {
    setOutput(name, value) {
      const delimiter = `ghadelimiter_${randomUUID()}`;
      if (!appendTo('GITHUB_OUTPUT', `${name}<<${delimiter}${EOL}${value}${EOL}${delimiter}${EOL}`)) {
        write(`${EOL}::set-output name=${name}::${escapeData(value)}${EOL}`);
      }
    },
    appendSummary(markdown) {
      appendTo('GITHUB_STEP_SUMMARY', markdown.endsWith(EOL) ? markdown : markdown + EOL);
    },
    mask: (secret) => {
      if (secret) command('add-mask', secret);
    },
    // plain log lines are where untrusted text shows (a model's summary, an error's message): never a command
    info: (message) => write(escapeLogText(message) + EOL),
    notice: (message) => command('notice', message),
    warning: (message) => command('warning', message),
    error: (message) => command('error', message),
  };
}
