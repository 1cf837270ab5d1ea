export * from './models/index';
export * from './github/index';
export * from './events/index';
