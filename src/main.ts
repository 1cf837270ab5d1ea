// Heavy modules load only when an event needs work, so a no-op event exits fast (cold start budget).
export {};
const { run } = await import('./run');
await run();
