/**
 * Running the grooming agents and the summary: each is a tool loop over the same tools and the same system prompt
 * (the shared, cacheable prefix), ending when it calls its submit tool with output that validates.
 *
 * None of them can write: the tools read the checkout and search issues; the GitHub token stays in this process and
 * no agent runs a command.
 */
import { z } from 'zod';
import {
  isFatal,
  agentFailureVerdict,
  engineerVerdictSchema,
  groomSummarySchema,
  groomSummarySchemaFor,
  isProviderError,
  type AgentVerdict,
  type GroomSummary,
  untrustedExcerpt,
  untrustedTitle,
} from '@hydraflow/core';
import type { GroomingPort } from '@hydraflow/github';
import { defineTool, runToolLoop, type AgentTool, type TurnGateway } from '../../agents/tool-loop';
import { createReadOnlyTools } from '../../agents/tools';
import { taskHeader, type AgentRole } from './prompts';

export interface AgentRun {
  name: string;
  verdict: AgentVerdict;
  failed: boolean;
  /** Why it failed (shown in the job summary and the progress details). */
  failure?: string;
  /** It failed at the model provider (the call, not the answer): see groomFailsClosed. */
  provider?: boolean;
  turns: number;
  ms: number;
}

const SEARCH_LIMIT = 10;
const EXCERPT_CHARS = 300;

export function searchIssuesTool(grooming: GroomingPort): AgentTool {
  return defineTool({
    name: 'search_issues',
    description:
      "Search this repository's issues and pull requests (GitHub search syntax: words, is:open, is:pr, in:title). Read-only.",
    input: z.strictObject({ query: z.string().min(1).max(200).describe('Search words and qualifiers.') }),
    // Other people's issues are as untrusted as this one: what GitHub hides in them stays hidden from the agent.
    async run({ query }) {
      const found = await grooming.searchIssues(query, SEARCH_LIMIT);
      if (found.length === 0) return { content: 'No issue or pull request matches.' };
      return {
        content: found
          .map(
            (r) =>
              `${r.isPullRequest ? 'PR' : 'Issue'} #${r.number} (${r.state}) ${untrustedTitle(r.title, 200)}\n  ${untrustedExcerpt(r.excerpt, EXCERPT_CHARS)}`,
          )
          .join('\n'),
      };
    },
  });
}

/** Both submit tools are in every call's tool list (same prefix for all); each caller accepts only its own. */
function submitTools(who: 'agent' | 'summary', agentNames: readonly string[], isEngineer: boolean): AgentTool[] {
  return [
    defineTool({
      name: 'submit_verdict',
      description: 'Agents only: submit your verdict. Ends your work.',
      input: engineerVerdictSchema,
      async run(verdict) {
        if (who !== 'agent') return { content: 'You are the summary agent: call submit_summary.', isError: true };
        // Only the engineer recommends phases (the seed's Engineer output); another agent's are dropped.
        return { content: 'Verdict recorded.', final: isEngineer ? verdict : { ...verdict, recommended_phases: [] } };
      },
    }),
    defineTool({
      name: 'submit_summary',
      description: 'Summary agent only: submit the consolidated decision. Ends the grooming.',
      input: groomSummarySchema,
      async run(summary) {
        if (who !== 'summary') return { content: 'You are a grooming agent: call submit_verdict.', isError: true };
        const checked = groomSummarySchemaFor(agentNames).safeParse(summary);
        if (!checked.success) return { content: `Invalid summary:\n${z.prettifyError(checked.error)}`, isError: true };
        return { content: 'Summary recorded.', final: checked.data };
      },
    }),
  ];
}

export interface LoopSetup {
  gateway: TurnGateway;
  issue: number;
  system: { text: string; cache?: boolean }[];
  workspace: string;
  grooming: GroomingPort;
  agentNames: readonly string[];
  maxTurns: number;
  maxMs: number;
  maxTokens: number;
}

/** The tool list of every grooming call, in a fixed order: the cacheable prefix starts with it. */
async function toolsFor(setup: LoopSetup, who: 'agent' | 'summary', isEngineer: boolean) {
  const readOnly = await createReadOnlyTools({ root: setup.workspace });
  return {
    tools: [...readOnly.tools, searchIssuesTool(setup.grooming), ...submitTools(who, setup.agentNames, isEngineer)],
    dispose: () => readOnly.dispose(),
  };
}

/**
 * One agent's run. A failure of any kind but credit exhaustion or a budget (which stop the whole run, visibly) becomes
 * the seed's failure verdict; the caller decides whether grooming goes on with it (groomFailsClosed).
 */
export async function runAgent(setup: LoopSetup, role: AgentRole, onTurn?: (turns: number) => void): Promise<AgentRun> {
  const started = Date.now();
  const { tools, dispose } = await toolsFor(setup, 'agent', role.name === 'engineer');
  try {
    const result = await runToolLoop({
      gateway: setup.gateway,
      role: `groom_${role.name}`,
      issue: setup.issue,
      system: setup.system,
      task: `${taskHeader(role.name, setup.issue)}\n\n${role.brief}`,
      tools,
      limits: {
        maxTurns: role.explores ? setup.maxTurns : Math.min(3, setup.maxTurns),
        maxMs: setup.maxMs,
        maxTokens: setup.maxTokens,
      },
      maxOutputTokens: 4_000,
      finalTool: 'submit_verdict',
      ...(onTurn ? { onTurn } : {}),
    });
    if (result.outcome === 'finished' && result.final !== undefined) {
      return {
        name: role.name,
        verdict: result.final as AgentVerdict,
        failed: false,
        turns: result.turns,
        ms: Date.now() - started,
      };
    }
    // A budget stops the whole run (like credit), visibly: it is no question for the issue's author.
    if (result.outcome === 'capped' && result.error) throw result.error;
    const why = result.outcome === 'capped' ? result.detail : 'it answered without calling submit_verdict';
    return failed(role.name, why, result.turns, started);
  } catch (error) {
    if (isFatal(error)) throw error;
    return failed(role.name, messageOf(error), 0, started, isProviderError(error));
  } finally {
    await dispose();
  }
}

function failed(name: string, why: string, turns: number, started: number, provider = false): AgentRun {
  return {
    name,
    verdict: agentFailureVerdict(name),
    failed: true,
    failure: why.slice(0, 300),
    ...(provider ? { provider } : {}),
    turns,
    ms: Date.now() - started,
  };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The summary: undefined when it failed. The caller falls back to the raw questions (the seed) when it answered badly,
 * and escalates when the provider failed it (`provider`).
 */
export async function runSummary(
  setup: LoopSetup,
  task: string,
): Promise<{ summary: GroomSummary | undefined; failure?: string; provider?: boolean; turns: number }> {
  const { tools, dispose } = await toolsFor(setup, 'summary', false);
  try {
    const result = await runToolLoop({
      gateway: setup.gateway,
      role: 'groom_summary',
      issue: setup.issue,
      system: setup.system,
      task: `${taskHeader('summary', setup.issue)}\n\n${task}`,
      tools,
      limits: { maxTurns: 3, maxMs: setup.maxMs, maxTokens: setup.maxTokens },
      maxOutputTokens: 6_000,
      finalTool: 'submit_summary',
    });
    if (result.outcome === 'finished' && result.final !== undefined)
      return { summary: result.final as GroomSummary, turns: result.turns };
    if (result.outcome === 'capped' && result.error) throw result.error;
    return {
      summary: undefined,
      failure: result.outcome === 'capped' ? result.detail : 'it answered without calling submit_summary',
      turns: result.turns,
    };
  } catch (error) {
    if (isFatal(error)) throw error;
    return { summary: undefined, failure: messageOf(error), provider: isProviderError(error), turns: 0 };
  } finally {
    await dispose();
  }
}
