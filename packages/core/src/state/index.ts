export * from './schema';
export * from './migrate';
export * from './ops';
export * from './codec';
export * from './progress';
export * from './trust';
