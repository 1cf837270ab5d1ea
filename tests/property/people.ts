/**
 * The people of a history, one per permission level GitHub has (plus the two ways of having no role at all), each with
 * the author_association GitHub shows for them. On a public repository anyone can open issues, comment and review, and
 * GitHub's permission API answers `read` for someone with no role; the triage role is needed to set labels and write
 * access to push. HydraFlow's `commands.min_permission` (write, the default) decides who steers it.
 */
import type { Permission } from '@hydraflow/testkit';

export const LEVELS = ['admin', 'maintain', 'write', 'triage', 'read', 'member', 'outsider'] as const;
export type Level = (typeof LEVELS)[number];

export interface Person {
  login: string;
  permission: Permission;
  association: string;
}

export const PEOPLE: Readonly<Record<Level, Person>> = {
  admin: { login: 'ada', permission: 'admin', association: 'MEMBER' },
  maintain: { login: 'max', permission: 'maintain', association: 'MEMBER' },
  write: { login: 'alice', permission: 'write', association: 'COLLABORATOR' },
  triage: { login: 'tina', permission: 'triage', association: 'COLLABORATOR' },
  read: { login: 'rita', permission: 'read', association: 'COLLABORATOR' },
  // an organization member with no role on this repository (MEMBER says nothing of access)
  member: { login: 'mo', permission: 'read', association: 'MEMBER' },
  // anyone on GitHub
  outsider: { login: 'olly', permission: 'read', association: 'NONE' },
};

/** commands.min_permission (write) or more: may steer HydraFlow, and gives a go that counts. */
export const steers = (level: Level): boolean => level === 'admin' || level === 'maintain' || level === 'write';

/** The triage role or more: GitHub lets them set and remove labels. */
export const labels = (level: Level): boolean => steers(level) || level === 'triage';

export const levelOf = (login: string): Level | undefined => LEVELS.find((level) => PEOPLE[level].login === login);
