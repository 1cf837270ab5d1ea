import { BranchFile, type BranchFileSnapshot, type BranchFileWrite } from './branch-file';
import type { RestClient } from './client';
import type { Repo } from './rest-issues';

/** HydraFlow's spend ledger branch and its file (packages/core/src/budget/day-ledger-codec.ts describes the file). */
export const SPEND_BRANCH = 'hydraflow/spend';
export const SPEND_FILE = 'spend.json';

const README = `# HydraFlow's spend ledger

This branch holds HydraFlow's daily spend ledger (\`${SPEND_FILE}\`): what each issue and phase spent on model calls
today, against \`budgets.per_day\` in \`.github/hydraflow.yml\`. HydraFlow writes it with the workflow's token and signs it with
\`HYDRAFLOW_STATE_KEY\`; a commit HydraFlow did not make stops its spending for the rest of the UTC day. Do not edit it.
Protect it from force pushes and deletion (a branch protection rule with nothing ticked does both).
`;

/** The branch's head as GitHub answered it, with GitHub's clock, which decides the UTC day. */
export type SpendSnapshot = Omit<BranchFileSnapshot, 'unreadable'>;

export type SpendWrite = BranchFileWrite;

/** The spend ledger on GitHub: a file on a branch of its own, written with a compare-and-swap (branch-file.ts). */
export class SpendLedgerBranch {
  private readonly file: BranchFile;

  constructor(octokit: RestClient, repo: Repo) {
    this.file = new BranchFile(octokit, repo, {
      branch: SPEND_BRANCH,
      path: SPEND_FILE,
      companions: [{ path: 'README.md', content: README }],
      what: 'the spend ledger',
    });
  }

  read(): Promise<SpendSnapshot> {
    return this.file.read();
  }

  /**
   * Writes `text` as spend.json in the commit after `expectedHead` (null: creates the branch with it). Not ok when the
   * branch is no longer at `expectedHead` (or was created meanwhile): read again and retry.
   */
  write(expectedHead: string | null, text: string, headline: string): Promise<SpendWrite> {
    return this.file.write(expectedHead, text, headline);
  }
}
