import { config } from 'zod';

// zod compiles a fast parser for an object schema the first time it parses one: a gain for a server that parses the
// same schema thousands of times, a cost (~10 ms) for a run that parses each schema a few times. Each object schema
// reads this setting when it is built, so it must be set before any schema module loads: src/run.ts imports this
// module first (set in run.ts's own body, it came after @hydraflow/core's schemas were built and changed nothing).
config({ jitless: true });
