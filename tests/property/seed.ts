/**
 * The seed fast-check starts from. Plain `pnpm test` (what CI runs on every version) plays the same histories each
 * time, so a red run is a regression of that version, never the luck of the draw; new histories are explored whenever
 * HYDRAFLOW_PROPERTY_RUNS is set (run 5000 before calling a capability done, README "Development") or
 * HYDRAFLOW_PROPERTY_SEED=random; HYDRAFLOW_PROPERTY_SEED=<n> replays a seed a failure printed.
 */
const CI_SEED = 20261127;

export function propertySeed(): { seed?: number } {
  const wanted = process.env.HYDRAFLOW_PROPERTY_SEED;
  if (wanted === 'random') return {};
  if (wanted) return { seed: Number(wanted) };
  return process.env.HYDRAFLOW_PROPERTY_RUNS || process.env.HYDRAFLOW_PROPERTY_PULL_RUNS ? {} : { seed: CI_SEED };
}
