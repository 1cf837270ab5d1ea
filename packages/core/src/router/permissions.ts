import type { Permission } from '../config/schema';

/**
 * Rank of a repository permission as GitHub's collaborator-permission API reports it. That API's `permission` field
 * reports `maintain` as `write` and `triage` as `read`, so those pairs rank the same here: requiring `maintain` is
 * effectively requiring `write`, and `triage` is `read`.
 */
const RANK: Readonly<Record<string, number>> = { none: 0, read: 1, triage: 1, write: 2, maintain: 2, admin: 3 };

export function permissionRank(permission: string | null | undefined): number {
  return permission ? (RANK[permission.toLowerCase()] ?? 0) : 0;
}

/** Does `actual` (from the collaborator-permission API) meet `required`? Unknown or missing → no. */
export function permissionAtLeast(actual: string | null | undefined, required: Permission): boolean {
  return permissionRank(actual) >= Math.max(1, permissionRank(required));
}

/** The stricter of two permissions. */
export function stricterPermission(a: Permission, b: Permission): Permission {
  return permissionRank(a) >= permissionRank(b) ? a : b;
}
