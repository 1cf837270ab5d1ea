export * from './models/index';
export * from './github/index';
