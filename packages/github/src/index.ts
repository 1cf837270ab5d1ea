export * from './client';
export * from './port';
export * from './rest-issues';
export * from './pulls-port';
