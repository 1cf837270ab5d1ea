/** The repository's git URL on the server the run belongs to (where HydraFlow fetches and pushes). */
export function remoteUrlOf(runner: { serverUrl: string; owner: string; repo: string }): string {
  return `${runner.serverUrl.replace(/\/$/, '')}/${runner.owner}/${runner.repo}.git`;
}
