export * from './prices';
export * from './cost';
