/**
 * The plan phase's recorded answers for worlds whose job has no checkout (`createWorld`): since a clear triage on the
 * routing step goes on into planning in the same run, tests of the routing step script the plan too. The plan only
 * creates files, so its paths check out against an empty workspace, and the reviewer accepts it at once.
 */
import { averagePlan, planAccepted } from '../lifecycle/scenario';

export const planCreatingFiles = {
  json: {
    ...averagePlan.json,
    summary: 'Add the change in a new module, with its tests.',
    files_to_touch: [
      { path: 'src/change.js', action: 'create', change: 'The change.' },
      { path: 'test/change.test.js', action: 'create', change: 'Its tests.' },
    ],
  },
};

/** Script entries for the plan that follows a clear triage: drafted once, accepted. */
export const planScript = { plan: planCreatingFiles, plan_review: planAccepted };
