import * as core from '@actions/core';
import { labelFor } from '../packages/core/src/pipeline/labels';

export async function run(): Promise<void> {
  core.info(`hello ${labelFor('plan')}`);
}
