export {
  GitWorkspace,
  GitError,
  assertSafeBranchName,
  isRefusedPush,
  isSafeBranchName,
  scrubGitEnv,
  type ChangedFile,
  type ChangeStatus,
  type GitIdentity,
  type GitWorkspaceOptions,
  type StagedEntry,
} from './workspace';
export type { BranchFile } from './branch-files';
