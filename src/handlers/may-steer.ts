import { hasLogin, permissionAtLeast } from '@hydraflow/core';
import type { Permission } from '@hydraflow/github';
import type { App } from '../app';

/**
 * The actor's permission when it is below commands.min_permission; undefined when they may steer (move the issue by
 * label or command: label-steering.ts, ADR 0019). HydraFlow's own identities and the allowed bots always may.
 */
export async function belowSteering(
  app: Pick<App, 'config' | 'issues'>,
  actor: string,
): Promise<Permission | undefined> {
  if (hasLogin([...app.config.commands.allowed_bots, ...app.config.bot_logins], actor)) return undefined;
  const permission = await app.issues.getPermission(actor);
  return permissionAtLeast(permission, app.config.commands.min_permission) ? undefined : permission;
}
