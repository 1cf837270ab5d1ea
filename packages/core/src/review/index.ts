export * from './finding';
export * from './diff';
export * from './diff-view';
export * from './converge';
export * from './record';
export * from './render';
