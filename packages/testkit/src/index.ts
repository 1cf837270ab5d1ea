export * from './models/index';
