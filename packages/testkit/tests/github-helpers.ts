import { Octokit as Core } from '@octokit/core';
import { restEndpointMethods } from '@octokit/plugin-rest-endpoint-methods';
import { paginateRest } from '@octokit/plugin-paginate-rest';

export const Octokit = Core.plugin(restEndpointMethods, paginateRest);
export type OctokitClient = InstanceType<typeof Octokit>;

export function octokit(baseUrl: string, token: string): OctokitClient {
  return new Octokit({ auth: token, baseUrl, log: { debug() {}, info() {}, warn() {}, error() {} } });
}

export async function rejects(
  p: Promise<unknown>,
): Promise<{ status: number; message: string; response?: { data: unknown; headers: Record<string, unknown> } }> {
  try {
    await p;
  } catch (e) {
    return e as { status: number; message: string };
  }
  throw new Error('expected the request to fail');
}
