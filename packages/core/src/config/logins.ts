/**
 * GitHub logins are case-insensitive (`My-App[bot]` and `my-app[bot]` are one account), and the API spells each the
 * account's own way, which need not be how a user typed it in `bot_logins` or `commands.allowed_bots`. Every check of a
 * login against such a list goes through here.
 */
export function hasLogin(logins: readonly string[], login: string | null | undefined): boolean {
  if (!login) return false;
  const wanted = login.toLowerCase();
  return logins.some((l) => l.toLowerCase() === wanted);
}
