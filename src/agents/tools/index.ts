export { createWorkspaceTools, createReadOnlyTools } from './workspace-tools';
export type { Refusal, WorkspaceToolset, WorkspaceToolsOptions } from './workspace-tools';
export { PathGuard, type AccessMode, type GuardResult } from './path-guard';
export { commandEnv, isDeniedEnv, BASE_ALLOWED_ENV, DENIED_ENV } from './env';
