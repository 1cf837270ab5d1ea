export * from './schema';
export * from './record';
export * from './gate';
export * from './context';
export * from './render';
export * from './issue-text';
export * from './decomposition';
