import { hasLogin, permissionAtLeast } from '@hydraflow/core';
import type { PhaseContext } from './phase-context';

/**
 * The author of an issue that must wait for a human before any phase after triage spends on it (config
 * `outsider_issues: wait`, the default), or undefined when HydraFlow goes on by itself. On a public repository anyone
 * can open an issue; without this, each one would buy a plan, a coding agent's session and a review (up to
 * budgets.per_issue) on text nobody trusted. Authors with commands.min_permission on the repository (asked of the
 * permission API: author_association is not access — MEMBER says nothing of this repository and COLLABORATOR includes
 * read and triage roles), HydraFlow itself (bot_logins: its sub-issues), commands.allowed_bots and a human's explicit
 * request (/triage, /retry, a label) go on.
 * A permission the API cannot tell counts as none: the issue waits, and a human's /retry sends it on.
 */
export async function outsiderAuthor(ctx: PhaseContext): Promise<string | undefined> {
  const { config, issue } = ctx;
  if (config.outsider_issues === 'go' || ctx.forced) return undefined;
  const author = issue.author?.login;
  if (!author) return 'ghost'; // GitHub's name for a deleted account
  const bots = [...config.bot_logins, ...config.commands.allowed_bots];
  // OWNER is the one association that is access (a personal repository's owner); every other is asked of the API
  if (issue.authorAssociation === 'OWNER' || hasLogin(bots, author)) return undefined;
  const permission = await ctx.issues.getPermission(author).catch(() => 'none' as const);
  return permissionAtLeast(permission, config.commands.min_permission) ? undefined : author;
}
