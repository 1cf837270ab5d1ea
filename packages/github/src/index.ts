export * from './client';
export * from './port';
export * from './rest-issues';
export * from './pulls-port';
export * from './rest-pulls';
export * from './grooming-port';
export * from './graphql-grooming';
export * from './rest-setup';
