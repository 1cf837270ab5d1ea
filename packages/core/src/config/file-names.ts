/** The configuration file's default path. */
export const CONFIG_FILE = '.github/hydraflow.yml';

/**
 * The paths the configuration is looked for at, in order: the default path also answers to `.yaml`; a path the user
 * named is the only one. Imported alone by the step's first module (src/runner/remote-config.ts), so it loads nothing.
 */
export function configFileCandidates(path: string = CONFIG_FILE): string[] {
  return path === CONFIG_FILE ? [CONFIG_FILE, '.github/hydraflow.yaml'] : [path];
}
