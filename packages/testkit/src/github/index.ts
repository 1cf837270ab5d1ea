export { startGitHubEmulator, expectNoViolations } from './server';
export type { GitHubEmulator, GitHubEmulatorOptions, RequestLogEntry, Violation } from './server';
export { Faults, type FaultFilter } from './faults';
export {
  GitHubWorld,
  BOT_LOGIN,
  BOT_ID,
  fakeSha,
  type Permission,
  type EmulatedUser,
  type EmulatedLabel,
  type EmulatedIssue,
  type EmulatedComment,
  type EmulatedPull,
  type EmulatedPullFile,
  type EmulatedReaction,
  type EmulatedReview,
  type EmulatedReviewComment,
  type EmulatedReviewThread,
  type EmulatedDispatch,
  type EmulatedCheckRun,
  type EmulatedStatus,
  type ActionsWorkflowSettings,
  type EmulatedBranchProtection,
  type EmulatedWorkflowState,
} from './world';
export { blobSha, workflowId } from './contents';
export { COMMENT_BODY_MAX } from './routes';
export { specLoadStats, SPEC_FILE, loadSpec } from './openapi';
export { graphqlSchemaStats } from './graphql';
