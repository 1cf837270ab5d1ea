export * from './permissions';
export * from './commands';
export * from './route';
