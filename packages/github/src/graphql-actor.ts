/** An Actor (`author`, `editor`) as GitHub's GraphQL API gives it. */
export interface GraphqlActor {
  __typename: string;
  login: string;
}

/**
 * The login as REST and HydraFlow's config (`bot_logins`) spell it: GraphQL names an App by its slug (`github-actions`),
 * REST as `github-actions[bot]`. Comparing the two as they come never matches an App.
 */
export function restLogin(actor: GraphqlActor): string {
  return actor.__typename === 'Bot' && !actor.login.endsWith('[bot]') ? `${actor.login}[bot]` : actor.login;
}
