export * from './finding';
export * from './diff';
export * from './converge';
export * from './record';
export * from './render';
